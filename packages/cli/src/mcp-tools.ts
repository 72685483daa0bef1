/**
 * What the MCP server says about each memory tool beyond its input schema: a title, behaviour hints
 * (annotations) and the JSON Schema of its `structuredContent`. A tool that the table does not know (one
 * added to the tool handler later) still gets a title, the most cautious hints and the common output schema.
 */

/** MCP tool annotations: hints a client may use to decide whether to ask the user first. */
export interface McpToolAnnotations {
  readonly title: string;
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: false;
}

interface ToolMeta {
  readonly title: string;
  readonly readOnly: boolean;
  readonly destructive: boolean;
  readonly idempotent: boolean;
  /** Properties of `structuredContent` beyond `ok` and `text`. */
  readonly output: Readonly<Record<string, unknown>>;
}

const ID = { type: 'string', description: 'The memory id.' } as const;

const SKILL_ACTION = {
  skill: { type: 'string', description: 'The skill name.' },
  action: { type: 'string', enum: ['created', 'replaced', 'deleted'] },
} as const;

/**
 * The memory tools and what they do to the memory, as MCP's hints mean it: `memory_search`, `memory_get` and
 * `skill_list` only read. `memory_remember` adds a fact (an exact duplicate is a no-op, a near duplicate is
 * merged into the fact it repeats, whose old text stays in its history): it removes nothing, so it is not
 * destructive. `memory_update` supersedes a memory (search no longer returns the old text) and
 * `memory_forget` erases one: destructive. `skill_write` replaces a skill of that name and `skill_delete`
 * removes one: destructive. Calling any of them again with the same arguments changes nothing more
 * (idempotent): a repeated fact is a duplicate, a superseded or forgotten id is no longer found, a skill is
 * written with the same text or is already gone. Every tool works on the local file only
 * (`openWorldHint: false`).
 */
const TOOL_META: Readonly<Record<string, ToolMeta>> = {
  memory_search: {
    title: 'Search memory',
    readOnly: true,
    destructive: false,
    idempotent: true,
    output: {
      results: {
        type: 'array',
        description: 'The ranked results, best first.',
        items: {
          type: 'object',
          properties: {
            id: ID,
            kind: { type: 'string' },
            createdAt: { type: 'string', description: 'ISO 8601 time the memory was written.' },
            score: { type: 'number', description: 'The fused score the order is based on.' },
            content: { type: 'string', description: 'The matching text, on one line, cut to the room.' },
            pointer: { type: 'string', description: 'Read more of it with memory_get.' },
          },
          required: ['id', 'kind', 'createdAt', 'score', 'content'],
        },
      },
      lexicalOnly: { type: 'boolean', description: 'True when the vector arm did not take part.' },
    },
  },
  memory_remember: {
    title: 'Remember a fact',
    readOnly: false,
    destructive: false,
    idempotent: true,
    output: {
      id: ID,
      action: { type: 'string', enum: ['remembered', 'merged', 'duplicate'] },
    },
  },
  memory_get: {
    title: 'Read a memory by id or pointer',
    readOnly: true,
    destructive: false,
    idempotent: true,
    output: {},
  },
  skill_write: {
    title: 'Write a skill',
    readOnly: false,
    destructive: true,
    idempotent: true,
    output: SKILL_ACTION,
  },
  skill_delete: {
    title: 'Delete a skill',
    readOnly: false,
    destructive: true,
    idempotent: true,
    output: SKILL_ACTION,
  },
  skill_list: {
    title: 'List skills',
    readOnly: true,
    destructive: false,
    idempotent: true,
    output: {
      skills: {
        type: 'array',
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, description: { type: 'string' } },
          required: ['name', 'description'],
        },
      },
    },
  },
  memory_update: {
    title: 'Correct a memory',
    readOnly: false,
    destructive: true,
    idempotent: true,
    output: { id: ID, action: { type: 'string', enum: ['updated'] } },
  },
  memory_forget: {
    title: 'Forget a memory',
    readOnly: false,
    destructive: true,
    idempotent: true,
    output: {},
  },
};

/** `memory_search` → `Memory search`: the title of a tool the table does not know. */
function titleOf(name: string): string {
  const words = name.split('_').join(' ');
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

function metaOf(name: string): ToolMeta {
  return (
    TOOL_META[name] ?? {
      title: titleOf(name),
      readOnly: false,
      destructive: true,
      idempotent: false,
      output: {},
    }
  );
}

/** The title and hints of a tool. */
export function toolAnnotations(name: string): McpToolAnnotations {
  const meta = metaOf(name);
  return {
    title: meta.title,
    readOnlyHint: meta.readOnly,
    destructiveHint: meta.destructive,
    idempotentHint: meta.idempotent,
    openWorldHint: false,
  };
}

/**
 * The JSON Schema of a tool's `structuredContent`: `ok` and `text` (the same answer as the text content),
 * and the tool's own fields, present when the call succeeded.
 */
export function toolOutputSchema(name: string): {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, unknown>>;
  readonly required: readonly string[];
} {
  return {
    type: 'object',
    properties: {
      ok: { type: 'boolean', description: 'False when the call failed; text says why.' },
      text: { type: 'string', description: 'The answer as text, the same as the text content.' },
      ...metaOf(name).output,
    },
    required: ['ok', 'text'],
  };
}
