/**
 * Archive pointers: `session/<sessionId>#<from>-<to>` (or `#<seq>` for one event), as search results print
 * them and `memory_get` / `engram get` read them.
 */

/** Most characters of the session id inside a pointer. */
export const MAX_POINTER_SESSION_ID_LENGTH = 200;

/** The pointer grammar: a session id without `#` or whitespace, then one sequence number or a range. */
export const ARCHIVE_POINTER_PATTERN: RegExp = /^session\/([^#\s]{1,200})#(\d{1,9})(?:-(\d{1,9}))?$/;

/** A parsed archive pointer: an inclusive range of event sequence numbers of one session. */
export interface ArchivePointer {
  readonly sessionId: string;
  readonly from: number;
  readonly to: number;
}

/** Parses an archive pointer; null when the text is not one (or its range is empty or starts below 1). */
export function parseArchivePointer(text: string): ArchivePointer | null {
  const match = ARCHIVE_POINTER_PATTERN.exec(text);
  if (match === null) return null;
  const from = Number(match[2]);
  const to = match[3] === undefined ? from : Number(match[3]);
  if (!(from >= 1) || !(to >= from)) return null;
  return { sessionId: match[1] as string, from, to };
}

/** Formats an archive pointer as `session/<sessionId>#<from>-<to>`. */
export function formatArchivePointer(pointer: ArchivePointer): string {
  return `session/${pointer.sessionId}#${pointer.from}-${pointer.to}`;
}
