/**
 * Windows of chunked memories: a memory longer than the store's chunk budget is searched chunk by chunk, and a
 * result names its matching chunk (`explanation.chunk`). Search results, `memory_get` and context injection
 * show that window (`content.slice(start, end)`, UTF-16 offsets) instead of the whole content, and print it as
 * the pointer `memory/<id>#<start>-<end>`, which `memory_get` reads back.
 */
import type { ChunkSpan, MemoryRecord } from '@engram/store';

/** The window pointer grammar: a memory id without `#` or whitespace, then a UTF-16 offset range. */
export const MEMORY_WINDOW_PATTERN: RegExp = /^memory\/([^#\s]{1,200})#(\d{1,9})-(\d{1,9})$/;

/** A parsed window pointer. */
export interface MemoryWindow {
  readonly id: string;
  readonly start: number;
  readonly end: number;
}

/** Parses a window pointer; null when the text is not one or its range is empty. */
export function parseMemoryWindow(text: string): MemoryWindow | null {
  const match = MEMORY_WINDOW_PATTERN.exec(text);
  if (match === null) return null;
  const start = Number(match[2]);
  const end = Number(match[3]);
  if (!(end > start)) return null;
  return { id: match[1] as string, start, end };
}

/** The window pointer of a result's chunk. */
export function formatMemoryWindow(id: string, chunk: ChunkSpan): string {
  return `memory/${id}#${chunk.start}-${chunk.end}`;
}

/** The text to show for a result: its matching chunk's window, or the whole content of a one-chunk memory. */
export function resultText(record: Pick<MemoryRecord, 'content'>, chunk: ChunkSpan | undefined): string {
  return chunk === undefined ? record.content : record.content.slice(chunk.start, chunk.end);
}
