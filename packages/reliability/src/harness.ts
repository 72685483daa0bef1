/**
 * Shared pieces of the reliability suites: a seeded PRNG, the raw consistency inspection of a store file, the
 * child-process protocol (one JSON object per stdout line) and the content checksum the concurrent suite uses.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openDatabase, type SqliteDatabase } from '@engram/store-sqlite/raw';
import { mulberry32 } from '@engram/test-support/prng';

/** A small deterministic PRNG (mulberry32): the same seed gives the same sequence on every machine. */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** An integer in [min, max]. */
  between(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** True with probability p. */
  chance(p: number): boolean;
}

/** Creates a mulberry32 PRNG from a 32-bit seed. */
export function createPrng(seed: number): Prng {
  const next = mulberry32(seed);
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    between: (min, max) => min + int(max - min + 1),
    pick<T>(items: readonly T[]): T {
      const item = items[int(items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    chance: (p) => next() < p,
  };
}

/** The seed of a suite: `ENGRAM_RELIABILITY_SEED` when set (to replay a run), the suite's fixed default otherwise. */
export function suiteSeed(fallback: number): number {
  const raw = process.env.ENGRAM_RELIABILITY_SEED;
  if (raw === undefined || raw.trim() === '') return fallback;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error('ENGRAM_RELIABILITY_SEED must be an integer');
  return seed >>> 0;
}

/** Words with pairwise distinct Porter stems: a lexical hit for one of them proves the row contains it. */
export const VOCABULARY: readonly string[] = Object.freeze([
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
  'mike',
  'november',
  'oscar',
  'papa',
  'quebec',
  'romeo',
  'sierra',
  'tango',
  'uniform',
  'victor',
  'whiskey',
  'xray',
  'yankee',
  'zulu',
]);

/** CJK phrases (≥ 3 characters) that exercise the trigram index. */
export const CJK_PHRASES: readonly string[] = Object.freeze(['数据库连接池', '向量索引重建', '会话归档记录']);

/** A short checksum of a text (SHA-256, 16 hex characters). */
export function checksum(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

/** The tag that carries the checksum of a memory's content. */
export function checksumTag(content: string): string {
  return `chk:${checksum(content)}`;
}

/** What a raw inspection of a store file found. Every list should be empty and both checks `ok`. */
export interface ConsistencyReport {
  readonly integrity: string;
  /** FTS5 `integrity-check` of the word and trigram tables: `ok` or the error code. */
  readonly ftsWords: string;
  readonly ftsTrigram: string;
  /** FTS keys without a memory row (or past the memory's chunks). */
  readonly ghostWords: readonly number[];
  readonly ghostTrigram: readonly number[];
  /** Memory rows (or chunks of a long memory) missing from the word index (silently unindexed). */
  readonly unindexed: readonly number[];
  /** CJK rows missing from the trigram index. */
  readonly unindexedCjk: readonly number[];
  /**
   * Vector keys without a memory row, of another agent, of a short row that is not `ready`, or of a chunk that
   * is gone or not marked embedded.
   */
  readonly ghostVectors: readonly number[];
  /** `ready` rows missing a vector: a short row's, or any embedded chunk's, or with a chunk still pending. */
  readonly readyWithoutVector: readonly number[];
  /** Chunk rows without their memory, and chunked memories whose chunk rows do not number `chunk_count`. */
  readonly ghostChunks: readonly number[];
  /** Tag rows without their memory row. */
  readonly ghostTags: number;
  /** With a quantised vector index: keys in the float table or the quantised table but not in both. */
  readonly quantOutOfStep: readonly number[];
  readonly memories: number;
  readonly vectors: number;
  readonly events: number;
}

function rowids(db: SqliteDatabase, sql: string): number[] {
  return (db.prepare(sql).all() as { rid: number | bigint }[]).map((r) => Number(r.rid));
}

function ftsCheck(db: SqliteDatabase, table: string): string {
  try {
    db.prepare(`INSERT INTO ${table}(${table}) VALUES ('integrity-check')`).run();
    return 'ok';
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? code : 'error';
  }
}

/** Inspects an open raw connection (sqlite-vec loaded) of a store with a vector table. */
export function inspectConnection(db: SqliteDatabase): ConsistencyReport {
  const integrity = (db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[])
    .map((r) => r.integrity_check)
    .join('; ');
  const hasVec =
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE name = 'memories_vec'").get() !== undefined;
  const count = (sql: string): number => Number((db.prepare(sql).get() as { n: number | bigint }).n);
  // A chunk's FTS rows and vector are keyed `rid + index · 2^40`; a short memory's by its rid (index 0).
  const K = 1_099_511_627_776;
  const ghostFts = (t: string): string =>
    `SELECT rowid AS rid FROM ${t} WHERE NOT EXISTS (SELECT 1 FROM memories m
       WHERE m.rid = ${t}.rowid % ${K} AND ${t}.rowid / ${K} < m.chunk_count)`;
  return {
    integrity,
    ftsWords: ftsCheck(db, 'memories_fts_words'),
    ftsTrigram: ftsCheck(db, 'memories_fts_trigram'),
    ghostWords: rowids(db, ghostFts('memories_fts_words')),
    ghostTrigram: rowids(db, ghostFts('memories_fts_trigram')),
    unindexed: rowids(
      db,
      `SELECT rid FROM memories WHERE chunk_count = 1 AND rid NOT IN (SELECT rowid FROM memories_fts_words)
       UNION SELECT c.rid FROM memory_chunks c
       WHERE c.rid + c.idx * ${K} NOT IN (SELECT rowid FROM memories_fts_words)`,
    ),
    // A chunked CJK memory: at least one of its chunks (the one with the CJK text) is in the trigram index.
    unindexedCjk: rowids(
      db,
      `SELECT rid FROM memories WHERE has_cjk = 1 AND chunk_count = 1
         AND rid NOT IN (SELECT rowid FROM memories_fts_trigram)
       UNION SELECT m.rid FROM memories m WHERE m.has_cjk = 1 AND m.chunk_count > 1 AND NOT EXISTS (
         SELECT 1 FROM memory_chunks c WHERE c.rid = m.rid
           AND c.rid + c.idx * ${K} IN (SELECT rowid FROM memories_fts_trigram))`,
    ),
    ghostVectors: hasVec
      ? rowids(
          db,
          `SELECT v.rowid AS rid FROM memories_vec v LEFT JOIN memories m ON m.rid = v.rowid % ${K}
           LEFT JOIN memory_chunks c ON c.agent_id = m.agent_id AND c.rid = m.rid AND c.idx = v.rowid / ${K}
           WHERE m.rid IS NULL OR m.agent_id <> v.agent_id
             OR (m.chunk_count = 1 AND (v.rowid <> m.rid OR m.embedding_state <> 'ready'))
             OR (m.chunk_count > 1 AND (c.idx IS NULL OR c.vec <> 1))`,
        )
      : [],
    readyWithoutVector: hasVec
      ? rowids(
          db,
          `SELECT rid FROM memories WHERE embedding_state = 'ready' AND chunk_count = 1
             AND rid NOT IN (SELECT rowid FROM memories_vec)
           UNION SELECT m.rid FROM memories m JOIN memory_chunks c ON c.rid = m.rid
           WHERE m.embedding_state = 'ready' AND (c.vec = 0
             OR (c.vec = 1 AND c.rid + c.idx * ${K} NOT IN (SELECT rowid FROM memories_vec)))`,
        )
      : rowids(db, "SELECT rid FROM memories WHERE embedding_state = 'ready'"),
    ghostChunks: rowids(
      db,
      `SELECT c.rid FROM memory_chunks c LEFT JOIN memories m ON m.rid = c.rid
       WHERE m.rid IS NULL OR m.agent_id <> c.agent_id
       UNION SELECT m.rid FROM memories m
       WHERE m.chunk_count <> max(1, (SELECT count(*) FROM memory_chunks c WHERE c.rid = m.rid))
         OR (m.chunk_count = 1 AND EXISTS (SELECT 1 FROM memory_chunks c WHERE c.rid = m.rid))`,
    ),
    ghostTags: count(
      'SELECT count(*) AS n FROM memory_tags t WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.rid = t.rid AND m.agent_id = t.agent_id)',
    ),
    quantOutOfStep:
      db.prepare("SELECT 1 AS x FROM sqlite_master WHERE name = 'memories_vec_quant'").get() === undefined
        ? []
        : rowids(
            db,
            `SELECT rowid AS rid FROM memories_vec WHERE rowid NOT IN (SELECT rowid FROM memories_vec_quant)
             UNION SELECT rowid FROM memories_vec_quant WHERE rowid NOT IN (SELECT rowid FROM memories_vec)`,
          ),
    memories: count('SELECT count(*) AS n FROM memories'),
    vectors: hasVec ? count('SELECT count(*) AS n FROM memories_vec') : 0,
    events: count('SELECT count(*) AS n FROM events'),
  };
}

/**
 * Opens a raw connection to a store file (better-sqlite3 + sqlite-vec; the cipher driver with `key` for an
 * encrypted file), inspects it and closes it.
 */
export function inspectDatabase(path: string, key?: string): ConsistencyReport {
  const db = openDatabase(path, {
    busyTimeoutMs: 10_000,
    ...(key === undefined
      ? {}
      : { encryption: { key: Buffer.from(key, 'utf8'), cipher: 'sqlcipher' as const } }),
  });
  try {
    return inspectConnection(db);
  } finally {
    db.close();
  }
}

/** The part of a report that must be empty/ok for a consistent store (for `toEqual` assertions). */
export function consistencyProblems(report: ConsistencyReport): Record<string, unknown> {
  return {
    integrity: report.integrity,
    ftsWords: report.ftsWords,
    ftsTrigram: report.ftsTrigram,
    ghostWords: report.ghostWords,
    ghostTrigram: report.ghostTrigram,
    unindexed: report.unindexed,
    unindexedCjk: report.unindexedCjk,
    ghostVectors: report.ghostVectors,
    readyWithoutVector: report.readyWithoutVector,
    ghostChunks: report.ghostChunks,
    ghostTags: report.ghostTags,
    quantOutOfStep: report.quantOutOfStep,
  };
}

/** What `consistencyProblems` returns for a consistent store. */
export const CONSISTENT: Readonly<Record<string, unknown>> = Object.freeze({
  integrity: 'ok',
  ftsWords: 'ok',
  ftsTrigram: 'ok',
  ghostWords: [],
  ghostTrigram: [],
  unindexed: [],
  unindexedCjk: [],
  ghostVectors: [],
  readyWithoutVector: [],
  ghostChunks: [],
  ghostTags: 0,
  quantOutOfStep: [],
});

/** The directory of this module's sources (children are spawned from here). */
export const SOURCE_DIR: string = dirname(fileURLToPath(import.meta.url));

/** A child process speaking the line protocol: every stdout line is one JSON object. */
export interface LineChild {
  readonly process: ChildProcessWithoutNullStreams;
  /** Every parsed line so far (unparseable lines are kept as `{ raw }`). */
  readonly lines: Record<string, unknown>[];
  /** Called for each line as it arrives. */
  onLine(listener: (line: Record<string, unknown>) => void): void;
  /** Resolves when the process has exited and its stdout is fully read. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  /** Writes one line to the child's stdin (ignored once the child is gone). */
  send(line: string): void;
}

/**
 * Spawns `node --import tsx <script>` (a .ts file next to this module, or its built .js) with arguments; the
 * process id is the script's own, so a SIGKILL hits the writer itself, not a wrapper.
 */
export function spawnChild(script: string, args: readonly string[]): LineChild {
  const isTs = import.meta.url.endsWith('.ts');
  const file = join(SOURCE_DIR, isTs ? `${script}.ts` : `${script}.js`);
  const child = spawn(process.execPath, [...(isTs ? ['--import', 'tsx'] : []), file, ...args], {
    cwd: join(SOURCE_DIR, '..'),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const listeners: ((line: Record<string, unknown>) => void)[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  child.stdin.on('error', () => {
    // the child may be gone (killed) before it reads its stdin
  });
  const rl = createInterface({ input: child.stdout });
  rl.on('line', (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      line = { raw: text };
    }
    lines.push(line);
    for (const l of listeners) l(line);
  });
  const stdoutClosed = new Promise<void>((resolve) => rl.on('close', () => resolve()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const exited = Promise.all([exit, stdoutClosed]).then(([e]) => ({ ...e, stderr }));
  return {
    process: child,
    lines,
    onLine: (listener) => listeners.push(listener),
    exited,
    send(line: string): void {
      if (child.stdin.writable) child.stdin.write(`${line}\n`);
    },
  };
}

/**
 * Resolves with the first line (at index `from` or later) that matches; rejects when the child exits first,
 * so a dead child fails the test at once instead of at its timeout.
 */
export function waitForLine(
  child: LineChild,
  matches: (line: Record<string, unknown>) => boolean,
  from = 0,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const found = child.lines.slice(from).find(matches);
    if (found !== undefined) {
      resolve(found);
      return;
    }
    let settled = false;
    child.onLine((line) => {
      if (settled || !matches(line)) return;
      settled = true;
      resolve(line);
    });
    void child.exited.then((e) => {
      if (settled) return;
      settled = true;
      reject(
        new Error(`the child exited (${e.code ?? e.signal}) before the awaited line; stderr: ${e.stderr}`),
      );
    });
  });
}

/** Writes one protocol line from a child, synchronously: it is in the pipe before the next statement runs. */
export function emit(line: Record<string, unknown>): void {
  writeSync(1, `${JSON.stringify(line)}\n`);
}

/** The store error code of a rejection, or a generic marker (never the message: it could carry content). */
export function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string'
    ? code
    : `non-store:${(err as { name?: unknown } | null)?.name ?? typeof err}`;
}

/** The agent the concurrent-writes children write as. */
export const WRITES_AGENT = 'shared-agent';

/**
 * `count` distinct facts from `seed`: random words, each fact with its own number, so no two are near
 * duplicates the remember tool could merge (facts that differ in a number are kept apart).
 */
export function factsFor(seed: number, count: number): string[] {
  const prng = createPrng(seed);
  return Array.from({ length: count }, (_, i) => {
    const words = Array.from({ length: 5 }, () => prng.pick(VOCABULARY));
    return `Fact ${i + 1}: the ${words.join(' ')} setting is ${1000 + i}`;
  });
}
