/**
 * Tags and memory content derived from archived events, without a model: the tool arguments, file paths,
 * a compact rendering of tool calls, and the derived tag set — checked by the contracts tag rule.
 */
import { contentHash, isValidTag, MAX_TAGS } from '@engram/contracts';
import type { EventRecord } from '@engram/store';

function asRecord(value: unknown): Readonly<Record<string, unknown>> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/**
 * The tool arguments of an event's metadata: `metadata.arguments`, `.args`, `.input` or `.params` (an object,
 * or a JSON string of one), else the metadata itself.
 */
export function toolArguments(
  metadata: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  for (const key of ['arguments', 'args', 'input', 'params']) {
    const value = metadata[key];
    const direct = asRecord(value);
    if (direct !== null) return direct;
    if (typeof value === 'string') {
      try {
        const parsed = asRecord(JSON.parse(value));
        if (parsed !== null) return parsed;
      } catch {
        // Not JSON: ignore.
      }
    }
  }
  return metadata;
}

const PATH_KEYS = ['path', 'file_path', 'filePath'] as const;

/** File paths named by tool arguments (`path`, `file_path`, `filePath`, `paths[]`), trimmed, in order, unique. */
export function filePathsOf(args: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  const add = (value: unknown): void => {
    if (typeof value !== 'string') return;
    const p = value.trim();
    if (p.length > 0 && !out.includes(p)) out.push(p);
  };
  for (const key of PATH_KEYS) add(args[key]);
  const paths = args.paths;
  if (Array.isArray(paths)) for (const p of paths) add(p);
  return out;
}

/** Renders a tool call compactly: `tool <name> <arguments as JSON>` (the event content when there are no arguments). */
export function renderToolCall(event: Pick<EventRecord, 'toolName' | 'content' | 'metadata'>): string {
  const name = event.toolName ?? 'unknown';
  const args = toolArguments(event.metadata);
  const hasArgs = args !== event.metadata || Object.keys(args).length > 0;
  let rendered = '';
  if (hasArgs) {
    try {
      rendered = JSON.stringify(args);
    } catch {
      rendered = '';
    }
  }
  if (rendered === '' || rendered === '{}') rendered = event.content.trim();
  return rendered === '' ? `tool ${name}` : `tool ${name} ${rendered}`;
}

/** The memory content of an event: the event content, or the compact rendering of a tool call. */
export function eventMemoryContent(
  event: Pick<EventRecord, 'type' | 'toolName' | 'content' | 'metadata'>,
): string {
  return event.type === 'tool_call' ? renderToolCall(event) : event.content;
}

/**
 * Tags derived from event metadata alone (no model call), sorted and unique: `type:<eventType>`,
 * `role:<role>` of a message (who said it: recall labels the line by it), `tool:<name>`, `file:<path>` for each path in the tool arguments, `hash:<sha256 of the normalised content>`
 * and `seq:<from>-<to>`. Tags the store would reject (too long, control characters …) are dropped.
 */
export function deriveEventTags(
  event: Pick<EventRecord, 'type' | 'toolName' | 'metadata'> & { readonly role?: string },
  content: string,
  seqFrom: number,
  seqTo: number,
): string[] {
  const tags = new Set<string>();
  tags.add(`type:${event.type}`);
  const role = event.role?.trim() ?? '';
  if (event.type === 'message' && role !== '') tags.add(`role:${role}`);
  if (event.toolName !== null && event.toolName.trim() !== '') tags.add(`tool:${event.toolName.trim()}`);
  const args = toolArguments(event.metadata);
  const paths = filePathsOf(args);
  if (args !== event.metadata)
    for (const p of filePathsOf(event.metadata)) if (!paths.includes(p)) paths.push(p);
  for (const p of paths) tags.add(`file:${p}`);
  tags.add(`hash:${contentHash(content)}`);
  tags.add(`seq:${seqFrom}-${seqTo}`);
  const valid = [...tags].filter((tag) => isValidTag(tag));
  if (valid.length > MAX_TAGS) {
    // Keep every non-file tag; drop the last file paths.
    const files = valid.filter((t) => t.startsWith('file:'));
    const others = valid.filter((t) => !t.startsWith('file:'));
    return [...others, ...files.slice(0, MAX_TAGS - others.length)].sort();
  }
  return valid.sort();
}
