import type { MemoryRecord } from '@engram/store';
import { z } from 'zod';
import { contentHash } from './content-hash.js';
import { EngramRetrievalError } from './errors.js';
import { canMergeFacts, cosineSimilarity, type FactMergeBlock, tokenJaccard } from './fact-merge.js';
import type { RetrievalResult } from './fusion.js';
import { memoryPointer } from './injection.js';
import type { QueryEmbedder, RetrievalTimers, ToolStore } from './ports.js';
import type { Retriever } from './retriever.js';
import { errorCode } from './store-errors.js';

/** Names of the agent-facing memory tools. */
export const MEMORY_TOOL_NAMES = [
  'memory_search',
  'memory_remember',
  'memory_get',
  'skill_write',
  'skill_delete',
  'skill_list',
] as const;
/** A memory tool name. */
export type MemoryToolName = (typeof MEMORY_TOOL_NAMES)[number];

/** A tool definition for a model API or an MCP server: the input schema is JSON Schema (draft 2020-12). */
export interface ToolDefinition {
  readonly name: MemoryToolName;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** Default and hard maximum of `memory_search`'s `maxChars`. */
export const SEARCH_MAX_CHARS: { readonly default: 4000; readonly max: 20000 } = Object.freeze({
  default: 4000,
  max: 20000,
});
/** Longest JSON-string arguments parsed (bounds the work a malformed call can cause). */
export const MAX_ARGUMENT_CHARS = 200_000;
/** Most events one `memory_get` pointer may span. */
export const MAX_POINTER_EVENTS = 200;
/** The store's cap on tags per row. */
const MAX_FACT_TAGS = 64;
/** Tag prefix `memory_remember` stores a topic under. */
export const TOPIC_TAG_PREFIX = 'topic:';

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const NO_CONTROL = /^[^\u0000-\u001f\u007f]+$/;
const POINTER = /^session\/([^#\s]{1,200})#(\d{1,9})(?:-(\d{1,9}))?$/;

const schemas = {
  memory_search: z.strictObject({
    query: z.string().min(1).max(2000).describe('What to look for: words, identifiers, paths or a question.'),
    limit: z.int().min(1).max(25).default(5).describe('Most results (1-25).'),
    maxChars: z
      .int()
      .min(200)
      .max(SEARCH_MAX_CHARS.max)
      .default(SEARCH_MAX_CHARS.default)
      .describe('Most characters of the whole answer.'),
    file: z
      .string()
      .min(1)
      .max(500)
      .regex(NO_CONTROL)
      .optional()
      .describe('Only memories tagged with this file path.'),
  }),
  memory_remember: z.strictObject({
    content: z
      .string()
      .min(1)
      .max(4000)
      .describe('One durable fact, stated on its own (preference, convention, decision).'),
    topic: z.string().min(1).max(64).optional().describe('A short topic label, e.g. "tooling".'),
  }),
  memory_get: z.strictObject({
    pointer: z
      .string()
      .min(1)
      .max(240)
      .regex(POINTER)
      .describe(
        'An archive pointer from memory_search: session/<sessionId>#<from>-<to> or session/<sessionId>#<seq>.',
      ),
    maxChars: z
      .int()
      .min(200)
      .max(SEARCH_MAX_CHARS.max)
      .default(8000)
      .describe('Most characters of the answer.'),
  }),
  skill_write: z.strictObject({
    name: z.string().regex(SKILL_NAME).describe('Unique skill name: letters, digits, "_", "-" (max 64).'),
    description: z.string().min(1).max(500).describe('When to use the skill, in one sentence.'),
    content: z.string().min(1).max(20000).describe('The procedure.'),
  }),
  skill_delete: z.strictObject({
    name: z.string().regex(SKILL_NAME).describe('The skill to delete.'),
  }),
  skill_list: z.strictObject({
    maxChars: z
      .int()
      .min(200)
      .max(SEARCH_MAX_CHARS.max)
      .default(8000)
      .describe('Most characters of the answer.'),
  }),
} as const;

const descriptions: Record<MemoryToolName, string> = {
  memory_search:
    "Search this agent's long-term memory (facts, past sessions, tool results). Returns ranked, compact results; archived ranges carry a pointer for memory_get.",
  memory_remember:
    'Remember one durable fact for future sessions. Exact duplicates are ignored; a near duplicate updates the existing fact unless they differ in a number, a negation or a name.',
  memory_get: 'Read the exact archived events of a pointer returned by memory_search.',
  skill_write: 'Create or replace a named, reusable procedure (skill).',
  skill_delete: 'Delete a skill by name.',
  skill_list: 'List the skills of this agent with their descriptions.',
};

function jsonSchemaOf(schema: z.ZodType): Readonly<Record<string, unknown>> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return Object.freeze(rest);
}

/** The tool definitions, derived from the zod input schemas (JSON Schema out). */
export const MEMORY_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze(
  MEMORY_TOOL_NAMES.map((name) =>
    Object.freeze({ name, description: descriptions[name], inputSchema: jsonSchemaOf(schemas[name]) }),
  ),
);

type ToolArgs = { [K in MemoryToolName]: z.output<(typeof schemas)[K]> };

/** The result of validating a tool call's arguments. */
export type ParsedToolCall =
  | { readonly ok: true; readonly name: MemoryToolName; readonly args: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly text: string };

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** A caller-supplied key, made safe to quote in a message: bounded, without control characters or quotes. */
function quotedKey(key: string): string {
  return `"${clip(key.replace(/[\u0000-\u001f\u007f-\u009f"\\`]/g, '?'), 32)}"`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const path = issue.path.length === 0 ? 'arguments' : clip(issue.path.map(String).join('.'), 64);
  switch (issue.code) {
    case 'invalid_type':
      return valueAt(input, issue.path) === undefined && issue.path.length > 0
        ? `"${path}" is required (${issue.expected})`
        : issue.path.length === 0
          ? 'arguments must be a JSON object'
          : `"${path}" must be ${issue.expected === 'int' ? 'an integer' : `of type ${issue.expected}`}`;
    case 'too_small':
      return `"${path}" must be at least ${String(issue.minimum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'too_big':
      return `"${path}" must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'invalid_format':
      return `"${path}" has an invalid format`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
        .slice(0, 5)
        .map(quotedKey)
        .join(', ')}`;
    default:
      return `"${path}" is invalid`;
  }
}

/**
 * Validates a tool call's arguments (an object, a JSON string, or nothing) against the tool's zod schema.
 * Pure; the error text names the tool and the fields, never echoes the values.
 */
export function parseToolArguments(name: string, args: unknown): ParsedToolCall {
  if (!(MEMORY_TOOL_NAMES as readonly string[]).includes(name)) {
    return { ok: false, text: `Unknown tool. Available tools: ${MEMORY_TOOL_NAMES.join(', ')}.` };
  }
  const tool = name as MemoryToolName;
  let input: unknown = args ?? {};
  if (typeof input === 'string') {
    if (input.length > MAX_ARGUMENT_CHARS) {
      return {
        ok: false,
        text: `Invalid arguments for ${tool}: longer than ${MAX_ARGUMENT_CHARS} characters.`,
      };
    }
    if (input.trim() === '') input = {};
    else {
      try {
        input = JSON.parse(input);
      } catch {
        return { ok: false, text: `Invalid arguments for ${tool}: not valid JSON.` };
      }
    }
  }
  const parsed = schemas[tool].safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((issue) => describeIssue(issue, input));
    const more = parsed.error.issues.length > 3 ? ` (+${parsed.error.issues.length - 3} more)` : '';
    return { ok: false, text: `Invalid arguments for ${tool}: ${issues.join('; ')}${more}.` };
  }
  return { ok: true, name: tool, args: parsed.data as Readonly<Record<string, unknown>> };
}

/** Configuration of {@link createToolHandler}. */
export interface ToolHandlerConfig {
  /** The store slice the tools read and write. */
  readonly store: ToolStore;
  /** Runs `memory_search` (`search` purpose) and the near-duplicate lookup of `memory_remember` (`decision`). */
  readonly retriever: Pick<Retriever, 'search' | 'decision'>;
  /** Compares facts by cosine similarity; without it, by token Jaccard. */
  readonly embedder?: QueryEmbedder;
  /** Cosine similarity from which two facts are near duplicates (default 0.9). */
  readonly mergeSimilarity?: number;
  /** Token Jaccard from which two facts are near duplicates when there is no embedder (default 0.8). */
  readonly mergeJaccard?: number;
  /** Importance of a remembered fact (default 0.7). */
  readonly factImportance?: number;
  /** Deadline of the embedding used to compare facts, in ms (default 2,000); past it, Jaccard is used. */
  readonly embeddingDeadlineMs?: number;
  /** Timers for that deadline (default the global ones). */
  readonly timers?: RetrievalTimers;
}

/** Who calls a tool. */
export interface ToolCallContext {
  readonly agentId: string;
  readonly signal?: AbortSignal;
}

/** Text for the model; `ok: false` for bad arguments or a failure, with a short typed explanation. */
export interface ToolCallResult {
  readonly ok: boolean;
  readonly text: string;
}

/** Executes memory tool calls for a model. */
export interface ToolHandler {
  readonly definitions: readonly ToolDefinition[];
  /**
   * Runs one tool call. Never rejects for bad arguments or store failures (they become `ok: false` with a
   * typed message); only a missing `ctx.agentId` — a programmer error — throws an `EngramRetrievalError`.
   */
  execute(name: string, args: unknown, ctx: ToolCallContext): Promise<ToolCallResult>;
}

/** Causes that make a call fail (as opposed to degrading it). */
const FAILURE_CAUSES: ReadonlySet<string> = new Set([
  'storeUnusable',
  'storeTimeout',
  'storeError',
  'unknown',
]);

const defaultTimers: RetrievalTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

class ToolFailure {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

function storeFailure(tool: MemoryToolName, error: unknown): ToolFailure {
  const code = errorCode(error);
  return new ToolFailure(
    `${tool} failed: memory store error${code === undefined ? '' : ` (${clip(code, 64)})`}.`,
  );
}

function topicTag(topic: string): string | null {
  const slug = topic
    .normalize('NFKC')
    .toLowerCase()
    .trim()
    .replace(/\s+/gu, '-')
    .replace(/[^\p{L}\p{N}._-]/gu, '')
    .slice(0, 64);
  return slug === '' ? null : `${TOPIC_TAG_PREFIX}${slug}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function renderSearch(results: readonly RetrievalResult[], maxChars: number, note: string): string {
  const header = `${results.length} memor${results.length === 1 ? 'y' : 'ies'}${note}:\n`;
  const metas = results.map((r, i) => {
    const pointer = memoryPointer(r.record);
    return {
      prefix: `${i + 1}. [${r.record.kind} ${isoDate(r.record.createdAt)} id:${r.record.id}] `,
      suffix: pointer === null ? '\n' : ` (memory_get ${pointer})\n`,
      content: r.record.content,
    };
  });
  let out = header;
  for (const [index, meta] of metas.entries()) {
    const remaining = metas.length - index;
    const room = Math.floor((maxChars - out.length) / remaining) - meta.prefix.length - meta.suffix.length;
    if (room < 20) {
      out += `(${remaining} more not shown; raise maxChars)\n`;
      break;
    }
    out += `${meta.prefix}${oneLine(meta.content, room)}${meta.suffix}`;
  }
  return out.length <= maxChars ? out : `${out.slice(0, maxChars - 1)}…`;
}

/**
 * Creates the tool handler for `memory_search`, `memory_remember`, `memory_get`, `skill_write`,
 * `skill_delete` and `skill_list`, returning bounded text for the model.
 */
export function createToolHandler(config: ToolHandlerConfig): ToolHandler {
  const settings = Object.freeze({
    mergeSimilarity: config.mergeSimilarity ?? 0.9,
    mergeJaccard: config.mergeJaccard ?? 0.8,
    factImportance: config.factImportance ?? 0.7,
    embeddingDeadlineMs: config.embeddingDeadlineMs ?? 2000,
  });
  for (const [name, value, min, max] of [
    ['mergeSimilarity', settings.mergeSimilarity, -1, 1],
    ['mergeJaccard', settings.mergeJaccard, 0, 1],
    ['factImportance', settings.factImportance, 0, 1],
    ['embeddingDeadlineMs', settings.embeddingDeadlineMs, 1, 600_000],
  ] as const) {
    if (!Number.isFinite(value) || value < min || value > max) {
      throw new EngramRetrievalError(
        'ENGRAM_RETRIEVAL_INVALID_CONFIG',
        `Tool handler config "${name}" is out of range.`,
      );
    }
  }
  const { store, retriever, embedder } = config;
  const timers = config.timers ?? defaultTimers;

  /** Embeds texts under the deadline; null on any failure (the caller falls back to Jaccard). */
  const embedBounded = (
    texts: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<Float32Array[] | null> => {
    if (embedder === undefined) return Promise.resolve(null);
    const controller = new AbortController();
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: Float32Array[] | null): void => {
        if (done) return;
        done = true;
        timers.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (value === null) controller.abort();
        resolve(value);
      };
      const onAbort = (): void => finish(null);
      const timer = timers.setTimeout(() => finish(null), settings.embeddingDeadlineMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted === true) {
        finish(null);
        return;
      }
      try {
        embedder.embed(texts, { signal: controller.signal }).then(
          (vectors) =>
            finish(
              Array.isArray(vectors) &&
                vectors.length === texts.length &&
                vectors.every((v) => v instanceof Float32Array && v.every(Number.isFinite))
                ? vectors
                : null,
            ),
          () => finish(null),
        );
      } catch {
        finish(null);
      }
    });
  };

  const search = async (args: ToolArgs['memory_search'], ctx: ToolCallContext): Promise<ToolCallResult> => {
    const response = await retriever.search(ctx.agentId, args.query, {
      limit: args.limit,
      ...(args.file === undefined ? {} : { tags: [`file:${args.file}`] }),
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    });
    const { execution, results } = response;
    if (execution.outcome === 'cancelled') return { ok: false, text: 'memory_search was cancelled.' };
    if (execution.outcome === 'emptyQuery') {
      return { ok: false, text: 'Invalid arguments for memory_search: "query" has no searchable terms.' };
    }
    if (execution.outcome !== 'completed') {
      const cause = execution.degradations.find((c) => FAILURE_CAUSES.has(c)) ?? execution.degradations[0];
      return { ok: false, text: `memory_search failed${cause === undefined ? '' : ` (${cause})`}.` };
    }
    const lexicalOnly = execution.arms?.includes('vector') !== true;
    const embeddingCause = execution.degradations.find(
      (c) => c.startsWith('embedding') || c === 'vectorCold',
    );
    const note = lexicalOnly
      ? ` (keyword search only${embeddingCause === undefined ? '' : `: ${embeddingCause}`})`
      : '';
    if (results.length === 0) return { ok: true, text: `No memories found${note}.` };
    return { ok: true, text: renderSearch(results, args.maxChars, note) };
  };

  const remember = async (
    args: ToolArgs['memory_remember'],
    ctx: ToolCallContext,
    attempt: number,
  ): Promise<ToolCallResult> => {
    const content = args.content.trim();
    if (content === '')
      return { ok: false, text: 'Invalid arguments for memory_remember: "content" is empty.' };
    const hash = contentHash(content);
    let existing: readonly MemoryRecord[];
    try {
      existing = await store.findByContentHash(ctx.agentId, hash, 'fact');
    } catch (error) {
      throw storeFailure('memory_remember', error);
    }
    const duplicate = existing.find((r) => r.lifecycle === 'active');
    if (duplicate !== undefined) {
      return {
        ok: true,
        text: `Already remembered as fact ${duplicate.id}; nothing stored (exact duplicate).`,
      };
    }

    const neighbours = await retriever.decision(ctx.agentId, content, {
      kinds: ['fact'],
      limit: 5,
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    });
    if (neighbours.execution.outcome === 'cancelled')
      return { ok: false, text: 'memory_remember was cancelled.' };
    const candidates = neighbours.results.map((r) => r.record);
    const vectors = await embedBounded([content, ...candidates.map((c) => c.content)], ctx.signal);
    if (ctx.signal?.aborted === true) return { ok: false, text: 'memory_remember was cancelled.' };
    const own = vectors?.[0];
    const scored = candidates
      .map((record, i) => {
        const vector = vectors?.[i + 1];
        const byVector = own !== undefined && vector !== undefined && cosineSimilarity(own, vector) !== 0;
        const similarity = byVector ? cosineSimilarity(own, vector) : tokenJaccard(content, record.content);
        const threshold = byVector ? settings.mergeSimilarity : settings.mergeJaccard;
        return { record, similarity, similar: similarity >= threshold };
      })
      .filter((s) => s.similar)
      .sort((a, b) => b.similarity - a.similarity || (a.record.id < b.record.id ? -1 : 1));

    const tag = args.topic === undefined ? null : topicTag(args.topic);
    let blocked: { id: string; reason: FactMergeBlock } | undefined;
    for (const { record, similarity } of scored) {
      const verdict = canMergeFacts(record.content, content);
      if (!verdict.ok) {
        blocked ??= { id: record.id, reason: verdict.reason };
        continue;
      }
      const union = [...new Set([...record.tags, ...(tag === null ? [] : [tag])])].sort();
      const tags = union.length > MAX_FACT_TAGS ? record.tags : union;
      try {
        const merged = await store.updateMemory(ctx.agentId, record.id, record.revision, {
          content,
          importance: Math.max(record.importance, settings.factImportance),
          tags,
        });
        return {
          ok: true,
          text: `Merged into existing fact ${merged.id} (similarity ${similarity.toFixed(2)}); it now reads as given.`,
        };
      } catch (error) {
        if (errorCode(error) === 'ENGRAM_STORE_REVISION_CONFLICT' && attempt === 0) {
          return remember(args, ctx, 1);
        }
        if (errorCode(error) === 'ENGRAM_STORE_REVISION_CONFLICT') {
          return {
            ok: false,
            text: 'memory_remember failed: the similar fact changed concurrently; try again.',
          };
        }
        throw storeFailure('memory_remember', error);
      }
    }

    const profile = store.embeddingProfile;
    const canAttach =
      own !== undefined &&
      cosineSimilarity(own, own) !== 0 &&
      profile !== null &&
      embedder?.profile !== undefined &&
      profile.id === embedder.profile.id &&
      profile.dimensions === embedder.profile.dimensions &&
      own.length === profile.dimensions;
    let inserted: MemoryRecord;
    try {
      inserted = await store.insertMemory({
        agentId: ctx.agentId,
        kind: 'fact',
        content,
        importance: settings.factImportance,
        ...(tag === null ? {} : { tags: [tag] }),
        ...(canAttach ? { vector: own } : {}),
      });
    } catch (error) {
      throw storeFailure('memory_remember', error);
    }
    const separate =
      blocked === undefined
        ? ''
        : ` Kept separate from similar fact ${blocked.id}: they differ in a ${blocked.reason}.`;
    return { ok: true, text: `Remembered as fact ${inserted.id}.${separate}` };
  };

  const get = async (args: ToolArgs['memory_get'], ctx: ToolCallContext): Promise<ToolCallResult> => {
    const match = POINTER.exec(args.pointer);
    const sessionId = match?.[1];
    const from = Number(match?.[2]);
    const to = match?.[3] === undefined ? from : Number(match[3]);
    if (sessionId === undefined || !(from >= 1) || !(to >= from)) {
      return {
        ok: false,
        text: 'Invalid arguments for memory_get: "pointer" must be session/<sessionId>#<from>-<to>.',
      };
    }
    if (to - from + 1 > MAX_POINTER_EVENTS) {
      return {
        ok: false,
        text: `Invalid arguments for memory_get: "pointer" spans more than ${MAX_POINTER_EVENTS} events.`,
      };
    }
    let events: Awaited<ReturnType<ToolStore['readEvents']>>;
    try {
      events = await store.readEvents(ctx.agentId, sessionId, from, to);
    } catch (error) {
      throw storeFailure('memory_get', error);
    }
    if (events.length === 0) return { ok: false, text: 'memory_get: no archived events at that pointer.' };
    let out = `${events.length} archived event${events.length === 1 ? '' : 's'} (${args.pointer}):\n`;
    for (const [index, event] of events.entries()) {
      const head = `#${event.seq} ${event.role} ${event.type}${event.toolName === null ? '' : ` ${event.toolName}`}: `;
      const room = Math.floor((args.maxChars - out.length) / (events.length - index)) - head.length - 1;
      if (room < 20) {
        out += `(${events.length - index} more events not shown; raise maxChars or narrow the pointer)\n`;
        break;
      }
      out += `${head}${oneLine(event.content, room)}\n`;
    }
    return { ok: true, text: out.length <= args.maxChars ? out : `${out.slice(0, args.maxChars - 1)}…` };
  };

  const skillWrite = async (args: ToolArgs['skill_write'], ctx: ToolCallContext): Promise<ToolCallResult> => {
    try {
      const { created } = await store.writeSkill({
        agentId: ctx.agentId,
        name: args.name,
        description: args.description.trim(),
        content: args.content,
      });
      return { ok: true, text: `Skill "${args.name}" ${created ? 'created' : 'replaced'}.` };
    } catch (error) {
      throw storeFailure('skill_write', error);
    }
  };

  const skillDelete = async (
    args: ToolArgs['skill_delete'],
    ctx: ToolCallContext,
  ): Promise<ToolCallResult> => {
    let deleted: boolean;
    try {
      deleted = await store.deleteSkill(ctx.agentId, args.name);
    } catch (error) {
      throw storeFailure('skill_delete', error);
    }
    return deleted
      ? { ok: true, text: `Skill "${args.name}" deleted.` }
      : { ok: false, text: `skill_delete: no skill named "${args.name}".` };
  };

  const skillList = async (args: ToolArgs['skill_list'], ctx: ToolCallContext): Promise<ToolCallResult> => {
    let skills: Awaited<ReturnType<ToolStore['listSkills']>>;
    try {
      skills = await store.listSkills(ctx.agentId);
    } catch (error) {
      throw storeFailure('skill_list', error);
    }
    if (skills.length === 0) return { ok: true, text: 'No skills yet.' };
    const sorted = [...skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let out = `${sorted.length} skill${sorted.length === 1 ? '' : 's'}:\n`;
    for (const [index, skill] of sorted.entries()) {
      const line = `- ${skill.name}: ${oneLine(skill.description, 200)}\n`;
      if (out.length + line.length > args.maxChars - 60) {
        out += `(${sorted.length - index} more not shown; raise maxChars)\n`;
        break;
      }
      out += line;
    }
    return { ok: true, text: out };
  };

  return Object.freeze({
    definitions: MEMORY_TOOL_DEFINITIONS,
    async execute(name: string, args: unknown, ctx: ToolCallContext): Promise<ToolCallResult> {
      if (
        typeof ctx !== 'object' ||
        ctx === null ||
        typeof ctx.agentId !== 'string' ||
        ctx.agentId.trim() === ''
      ) {
        throw new EngramRetrievalError(
          'ENGRAM_RETRIEVAL_INVALID_INPUT',
          'ctx.agentId must be a non-empty string.',
        );
      }
      const parsed = parseToolArguments(name, args);
      if (!parsed.ok) return { ok: false, text: parsed.text };
      try {
        switch (parsed.name) {
          case 'memory_search':
            return await search(parsed.args as ToolArgs['memory_search'], ctx);
          case 'memory_remember':
            return await remember(parsed.args as ToolArgs['memory_remember'], ctx, 0);
          case 'memory_get':
            return await get(parsed.args as ToolArgs['memory_get'], ctx);
          case 'skill_write':
            return await skillWrite(parsed.args as ToolArgs['skill_write'], ctx);
          case 'skill_delete':
            return await skillDelete(parsed.args as ToolArgs['skill_delete'], ctx);
          case 'skill_list':
            return await skillList(parsed.args as ToolArgs['skill_list'], ctx);
        }
      } catch (error) {
        if (error instanceof ToolFailure) return { ok: false, text: error.text };
        const code = errorCode(error);
        return {
          ok: false,
          text: `${parsed.name} failed: internal error${code === undefined ? '' : ` (${clip(code, 64)})`}.`,
        };
      }
    },
  });
}
