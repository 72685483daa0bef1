/**
 * The state a quantised vector index build leaves when its process stops before the first step, written into a
 * SQLite store file through its raw connection (the caller's `openDatabase`), so a test can check that the next
 * writable open finishes the build.
 */

/** The part of a raw SQLite connection this needs. */
export interface RawConnection {
  prepare(sql: string): { run(): unknown };
  close(): void;
}

/** Empties the quantised table and sets the build watermark to 0, then closes the connection. */
export function interruptVectorIndexBuild(raw: RawConnection): void {
  try {
    raw.prepare('DELETE FROM memories_vec_quant').run();
    raw.prepare("INSERT INTO meta(key, value) VALUES ('vector_index_build', '0')").run();
  } finally {
    raw.close();
  }
}
