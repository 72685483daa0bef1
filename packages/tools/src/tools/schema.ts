import { ARCHIVE_POINTER_PATTERN, isValidTag } from '@engram/contracts';
import { MEMORY_WINDOW_PATTERN } from '@engram/retrieval';
import { z } from 'zod';
import { clip } from './render.js';

/** Names of the agent-facing memory tools, in the order they are offered. */
export const MEMORY_TOOL_NAMES = [
  'memory_search',
  'memory_remember',
  'memory_get',
  'memory_update',
  'memory_forget',
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

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const NO_CONTROL = /^[^\u0000-\u001f\u007f]+$/;

const memoryIdField = () => z.string().min(1).max(128).regex(NO_CONTROL);
const reasonField = () => z.string().min(1).max(500).regex(NO_CONTROL);

const maxCharsField = (fallback: number) =>
  z.int().min(200).max(SEARCH_MAX_CHARS.max).default(fallback).describe('Most characters of the answer.');

/** `memory_search`'s validated arguments. */
export interface MemorySearchArgs {
  readonly query: string;
  readonly limit: number;
  readonly maxChars: number;
  readonly file?: string | undefined;
  readonly history?: boolean | undefined;
}

/** `memory_remember`'s validated arguments. */
export interface MemoryRememberArgs {
  readonly content: string;
  readonly topic?: string | undefined;
}

/** `memory_get`'s validated arguments. */
export interface MemoryGetArgs {
  /** Exactly one of `id` and `pointer`. */
  readonly id?: string | undefined;
  readonly pointer?: string | undefined;
  readonly maxChars: number;
}

/** `memory_update`'s validated arguments. */
export interface MemoryUpdateArgs {
  readonly id: string;
  readonly content: string;
  readonly reason?: string | undefined;
}

/** `memory_forget`'s validated arguments. */
export interface MemoryForgetArgs {
  readonly id: string;
  readonly reason?: string | undefined;
}

/** `skill_write`'s validated arguments. */
export interface SkillWriteArgs {
  readonly name: string;
  readonly description: string;
  readonly content: string;
}

/** `skill_delete`'s validated arguments. */
export interface SkillDeleteArgs {
  readonly name: string;
}

/** `skill_list`'s validated arguments. */
export interface SkillListArgs {
  readonly maxChars: number;
}

/** The validated arguments of each tool (defaults applied); each tool's zod schema must produce them. */
export interface ToolArgs {
  readonly memory_search: MemorySearchArgs;
  readonly memory_remember: MemoryRememberArgs;
  readonly memory_get: MemoryGetArgs;
  readonly memory_update: MemoryUpdateArgs;
  readonly memory_forget: MemoryForgetArgs;
  readonly skill_write: SkillWriteArgs;
  readonly skill_delete: SkillDeleteArgs;
  readonly skill_list: SkillListArgs;
}

/** A tool's description for the model and how to build its input schema. */
interface ToolSpec<K extends MemoryToolName> {
  readonly description: string;
  readonly input: () => z.ZodType<ToolArgs[K]>;
}

/**
 * One entry per tool: its description for the model and its zod input schema (the JSON Schema offered to the
 * model is derived from it). Adding a tool: a name above, an entry here, a handler in `handlers.ts`.
 * The schemas are built on first use ({@link inputOf}), not at import: a process that loads the package and
 * never validates a call nor reads a definition's JSON Schema (a one-shot CLI search) does not build them.
 */
const TOOL_SPECS: { readonly [K in MemoryToolName]: ToolSpec<K> } = {
  memory_search: {
    description:
      "Search this agent's long-term memory (facts, past sessions, tool results). Returns ranked, compact results; archived ranges carry a pointer for memory_get.",
    input: () =>
      z.strictObject({
        query: z
          .string()
          .min(1)
          .max(2000)
          .describe('What to look for: words, identifiers, paths or a question.'),
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
          // The search filters on the tag `file:<file>`: the tag rule decides (a lone surrogate fails here).
          .refine((file) => isValidTag(`file:${file}`))
          .optional()
          .describe('Only memories tagged with this file path.'),
        history: z
          .boolean()
          .optional()
          .describe('Also return versions that were corrected or replaced since (marked superseded).'),
      }),
  },
  memory_remember: {
    description:
      'Remember one durable fact for future sessions. Exact duplicates are ignored; a near duplicate updates the existing fact unless they differ in a number, a negation or a name.',
    input: () =>
      z.strictObject({
        content: z
          .string()
          .min(1)
          .max(4000)
          .describe('One durable fact, stated on its own (preference, convention, decision).'),
        topic: z.string().min(1).max(64).optional().describe('A short topic label, e.g. "tooling".'),
      }),
  },
  memory_get: {
    description:
      'Read a memory by its id, or what a pointer returned by memory_search points at: the exact archived events of a session range, or the matching window of a long memory. Give either id or pointer.',
    input: () =>
      z
        .strictObject({
          id: memoryIdField().optional().describe('The id of a memory (from memory_search): its whole text.'),
          pointer: z
            .string()
            .min(1)
            .max(240)
            .regex(new RegExp(`(?:${ARCHIVE_POINTER_PATTERN.source})|(?:${MEMORY_WINDOW_PATTERN.source})`))
            .optional()
            .describe(
              'A pointer from memory_search: an archive range session/<sessionId>#<from>-<to> (or #<seq>), or the window of a long memory memory/<id>#<start>-<end>.',
            ),
          maxChars: maxCharsField(8000),
        })
        .refine((a) => (a.id === undefined) !== (a.pointer === undefined), {
          message: 'give either "id" or "pointer"',
        }),
  },
  memory_update: {
    description:
      'Correct a memory: the given text replaces it from now on. The old version is kept in its history (superseded, no longer returned by search). Use the id shown by memory_search.',
    input: () =>
      z.strictObject({
        id: memoryIdField().describe('The id of the memory to correct (from memory_search).'),
        content: z.string().min(1).max(4000).describe('The corrected fact, stated on its own.'),
        reason: reasonField().optional().describe('Why it changed, in a few words.'),
      }),
  },
  memory_forget: {
    description:
      'Forget a memory (and the earlier versions it replaced) for good, e.g. when the user asks. A tombstone records when and why; the content is erased unless the store keeps it.',
    input: () =>
      z.strictObject({
        id: memoryIdField().describe('The id of the memory to forget (from memory_search).'),
        reason: reasonField().optional().describe('Why it is forgotten, in a few words.'),
      }),
  },
  skill_write: {
    description: 'Create or replace a named, reusable procedure (skill).',
    input: () =>
      z.strictObject({
        name: z.string().regex(SKILL_NAME).describe('Unique skill name: letters, digits, "_", "-" (max 64).'),
        description: z.string().min(1).max(500).describe('When to use the skill, in one sentence.'),
        content: z.string().min(1).max(20000).describe('The procedure.'),
      }),
  },
  skill_delete: {
    description: 'Delete a skill by name.',
    input: () =>
      z.strictObject({
        name: z.string().regex(SKILL_NAME).describe('The skill to delete.'),
      }),
  },
  skill_list: {
    description: 'List the skills of this agent with their descriptions.',
    input: () => z.strictObject({ maxChars: maxCharsField(8000) }),
  },
};

/** A validated call of one tool. */
export interface ToolCallOf<K extends MemoryToolName> {
  readonly name: K;
  readonly args: ToolArgs[K];
}

/** A validated call of any tool: a union discriminated by `name`. */
export type MemoryToolCall = { [K in MemoryToolName]: ToolCallOf<K> }[MemoryToolName];

function jsonSchemaOf(schema: z.ZodType): Readonly<Record<string, unknown>> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return Object.freeze(rest);
}

const inputs = new Map<MemoryToolName, z.ZodType>();

/** The zod input schema of one tool, built on first use; the same object every time after. */
export function inputOf<K extends MemoryToolName>(name: K): z.ZodType<ToolArgs[K]> {
  let input = inputs.get(name);
  if (input === undefined) {
    input = TOOL_SPECS[name].input();
    inputs.set(name, input);
  }
  return input as z.ZodType<ToolArgs[K]>;
}

/** One tool's definition; its JSON Schema is derived on first read, then the same frozen object every time. */
function definitionOf(name: MemoryToolName): ToolDefinition {
  let inputSchema: Readonly<Record<string, unknown>> | undefined;
  return Object.freeze({
    name,
    description: TOOL_SPECS[name].description,
    get inputSchema(): Readonly<Record<string, unknown>> {
      inputSchema ??= jsonSchemaOf(inputOf(name));
      return inputSchema;
    },
  });
}

/**
 * The tool definitions, derived from the zod input schemas (JSON Schema out). Each `inputSchema` is derived
 * when first read (an enumerable getter: JSON.stringify, spreading and structuredClone see the value).
 */
export const MEMORY_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze(
  MEMORY_TOOL_NAMES.map(definitionOf),
);

/** The result of validating a tool call's arguments. */
export type ParsedToolCall =
  | ({ readonly ok: true } & MemoryToolCall)
  | { readonly ok: false; readonly text: string };

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

/** A length or value bound as said aloud: `1 character`, `2000 characters`, `25`. */
function bound(limit: number | bigint, origin: string): string {
  if (origin !== 'string') return String(limit);
  return `${String(limit)} character${Number(limit) === 1 ? '' : 's'}`;
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
      return `"${path}" must be at least ${bound(issue.minimum, issue.origin)}`;
    case 'too_big':
      return `"${path}" must be at most ${bound(issue.maximum, issue.origin)}`;
    case 'invalid_format':
      return `"${path}" has an invalid format`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
        .slice(0, 5)
        .map(quotedKey)
        .join(', ')}`;
    case 'custom':
      // A rule across fields of the schema's own (its message is a fixed text of this file, never the input).
      return issue.path.length === 0 ? issue.message : `"${path}" is invalid`;
    default:
      return `"${path}" is invalid`;
  }
}

function isToolName(name: string): name is MemoryToolName {
  return (MEMORY_TOOL_NAMES as readonly string[]).includes(name);
}

/** Reads raw arguments: an object, a JSON string, or nothing (an empty object). */
function readInput(tool: MemoryToolName, args: unknown): { input: unknown } | { error: string } {
  if (typeof args !== 'string') return { input: args ?? {} };
  if (args.length > MAX_ARGUMENT_CHARS) {
    return { error: `Invalid arguments for ${tool}: longer than ${MAX_ARGUMENT_CHARS} characters.` };
  }
  if (args.trim() === '') return { input: {} };
  try {
    return { input: JSON.parse(args) };
  } catch {
    return { error: `Invalid arguments for ${tool}: not valid JSON.` };
  }
}

function parseAs<K extends MemoryToolName>(name: K, input: unknown): ParsedToolCall {
  const parsed = inputOf(name).safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((issue) => describeIssue(issue, input));
    const more = parsed.error.issues.length > 3 ? ` (+${parsed.error.issues.length - 3} more)` : '';
    return { ok: false, text: `Invalid arguments for ${name}: ${issues.join('; ')}${more}.` };
  }
  // The schema of `name` produced `data`: it is that tool's arguments.
  return { ok: true, name, args: parsed.data } as ParsedToolCall;
}

/**
 * Validates a tool call's arguments (an object, a JSON string, or nothing) against the tool's zod schema.
 * Pure; the error text names the tool and the fields, never echoes the values.
 */
export function parseToolArguments(name: string, args: unknown): ParsedToolCall {
  if (!isToolName(name)) {
    return { ok: false, text: `Unknown tool. Available tools: ${MEMORY_TOOL_NAMES.join(', ')}.` };
  }
  const read = readInput(name, args);
  if ('error' in read) return { ok: false, text: read.error };
  return parseAs(name, read.input);
}
