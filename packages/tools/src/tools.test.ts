import type { MemoryRecord } from '@engram/store';
import { FRESH_MEMORY_FIELDS } from '@engram/test-support';
import { describe, expect, it } from 'vitest';
import { renderSearch, searchHits } from './tools/render.js';
import {
  MAX_ARGUMENT_CHARS,
  MEMORY_TOOL_DEFINITIONS,
  MEMORY_TOOL_NAMES,
  parseToolArguments,
} from './tools.js';

function shape(): Record<string, { required: unknown; properties: string[]; additionalProperties: unknown }> {
  return Object.fromEntries(
    MEMORY_TOOL_DEFINITIONS.map((d) => [
      d.name,
      {
        required: d.inputSchema.required ?? [],
        properties: Object.keys(d.inputSchema.properties as object),
        additionalProperties: d.inputSchema.additionalProperties,
      },
    ]),
  );
}

describe('tool definitions', () => {
  it('derive one JSON Schema object per tool from the zod schemas', () => {
    expect(MEMORY_TOOL_DEFINITIONS.map((d) => d.name)).toEqual([...MEMORY_TOOL_NAMES]);
    expect(shape()).toEqual({
      memory_search: {
        required: ['query'],
        properties: ['query', 'limit', 'maxChars', 'file', 'history'],
        additionalProperties: false,
      },
      memory_remember: {
        required: ['content'],
        properties: ['content', 'topic'],
        additionalProperties: false,
      },
      memory_get: { required: [], properties: ['id', 'pointer', 'maxChars'], additionalProperties: false },
      memory_update: {
        required: ['id', 'content'],
        properties: ['id', 'content', 'reason'],
        additionalProperties: false,
      },
      memory_forget: { required: ['id'], properties: ['id', 'reason'], additionalProperties: false },
      skill_write: {
        required: ['name', 'description', 'content'],
        properties: ['name', 'description', 'content'],
        additionalProperties: false,
      },
      skill_delete: { required: ['name'], properties: ['name'], additionalProperties: false },
      skill_list: { required: [], properties: ['maxChars'], additionalProperties: false },
    });
    for (const definition of MEMORY_TOOL_DEFINITIONS) {
      expect(definition.inputSchema.type).toBe('object');
      expect(definition.inputSchema).not.toHaveProperty('$schema');
      expect(definition.description.length).toBeGreaterThan(20);
    }
  });

  it('publish the bounds of memory_search', () => {
    const search = MEMORY_TOOL_DEFINITIONS.find((d) => d.name === 'memory_search');
    expect(search?.inputSchema.properties).toMatchObject({
      limit: { type: 'integer', minimum: 1, maximum: 25, default: 5 },
      maxChars: { type: 'integer', minimum: 200, maximum: 20000, default: 4000 },
    });
  });
});

describe('parseToolArguments', () => {
  it('accepts objects and JSON strings and fills defaults', () => {
    expect(parseToolArguments('memory_search', { query: 'pnpm' })).toEqual({
      ok: true,
      name: 'memory_search',
      args: { query: 'pnpm', limit: 5, maxChars: 4000 },
    });
    expect(parseToolArguments('memory_search', '{"query":"pnpm","limit":3}')).toMatchObject({
      ok: true,
      args: { query: 'pnpm', limit: 3 },
    });
    expect(parseToolArguments('skill_list', undefined)).toEqual({
      ok: true,
      name: 'skill_list',
      args: { maxChars: 8000 },
    });
  });

  it('names the field and the rule, never the value', () => {
    const secret = `SECRET-${'x'.repeat(5000)}`;
    const cases: [string, unknown, string][] = [
      ['memory_search', '{"query": ', 'Invalid arguments for memory_search: not valid JSON.'],
      ['memory_search', {}, 'Invalid arguments for memory_search: "query" is required (string).'],
      [
        'memory_search',
        { query: 42 },
        'Invalid arguments for memory_search: "query" must be of type string.',
      ],
      [
        'memory_search',
        { query: secret },
        'Invalid arguments for memory_search: "query" must be at most 2000 characters.',
      ],
      [
        'memory_search',
        { query: '' },
        'Invalid arguments for memory_search: "query" must be at least 1 character.',
      ],
      [
        'memory_search',
        { query: 'a', limit: 0 },
        'Invalid arguments for memory_search: "limit" must be at least 1.',
      ],
      [
        'memory_search',
        { query: 'a', limit: 2.5 },
        'Invalid arguments for memory_search: "limit" must be an integer.',
      ],
      [
        'memory_search',
        { query: 'a', maxChars: 999_999 },
        'Invalid arguments for memory_search: "maxChars" must be at most 20000.',
      ],
      ['memory_remember', [], 'Invalid arguments for memory_remember: arguments must be a JSON object.'],
      ['memory_remember', 'null', 'Invalid arguments for memory_remember: arguments must be a JSON object.'],
      [
        'memory_get',
        { pointer: 'nope' },
        'Invalid arguments for memory_get: "pointer" has an invalid format.',
      ],
      ['memory_get', {}, 'Invalid arguments for memory_get: give either "id" or "pointer".'],
      [
        'skill_write',
        { name: 'bad name!', description: 'd', content: 'c' },
        'Invalid arguments for skill_write: "name" has an invalid format.',
      ],
      [
        'skill_delete',
        { name: 'x', [secret]: 1 },
        `Invalid arguments for skill_delete: unknown field "${secret.slice(0, 32)}…".`,
      ],
    ];
    for (const [name, args, text] of cases) {
      const parsed = parseToolArguments(name, args);
      expect(parsed).toEqual({ ok: false, text });
      if (!parsed.ok) expect(parsed.text.length).toBeLessThan(200);
    }
  });

  it('bounds what it parses and quotes no control characters from unknown keys', () => {
    const huge = `{"query":"${'a'.repeat(MAX_ARGUMENT_CHARS)}"}`;
    expect(parseToolArguments('memory_search', huge)).toEqual({
      ok: false,
      text: `Invalid arguments for memory_search: longer than ${MAX_ARGUMENT_CHARS} characters.`,
    });
    expect(parseToolArguments('skill_delete', { name: 'x', 'bad\n"key\u0007': 1 })).toEqual({
      ok: false,
      text: 'Invalid arguments for skill_delete: unknown field "bad??key?".',
    });
    for (const text of ['[1,2', '{"query":', '{query: 1}', "{'query':'x'}", 'undefined', '\u0000']) {
      const parsed = parseToolArguments('memory_search', text);
      expect(parsed).toEqual({ ok: false, text: 'Invalid arguments for memory_search: not valid JSON.' });
    }
    for (const text of ['42', '"a string"', 'true']) {
      expect(parseToolArguments('memory_search', text)).toEqual({
        ok: false,
        text: 'Invalid arguments for memory_search: arguments must be a JSON object.',
      });
    }
  });

  it('rejects an unknown tool without echoing its name', () => {
    const parsed = parseToolArguments(`memory_${'z'.repeat(300)}`, {});
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.text).toBe(
        'Unknown tool. Available tools: memory_search, memory_remember, memory_get, memory_update, memory_forget, skill_write, skill_delete, skill_list.',
      );
    }
  });

  it('refuses a `file` filter the tag rule refuses, naming the field and not the value', () => {
    expect(parseToolArguments('memory_search', { query: 'retry', file: 'src/a\ud800.ts' })).toEqual({
      ok: false,
      text: 'Invalid arguments for memory_search: "file" is invalid.',
    });
    expect(parseToolArguments('memory_search', { query: 'retry', file: 'src/a\u0000.ts' })).toEqual({
      ok: false,
      text: 'Invalid arguments for memory_search: "file" has an invalid format; "file" is invalid.',
    });
    expect(parseToolArguments('memory_search', { query: 'retry', file: 'src/日本.ts' }).ok).toBe(true);
  });

  it('reports at most three issues', () => {
    const parsed = parseToolArguments('skill_write', { a: 1, b: 2 });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.text).toMatch(/\(\+1 more\)\.$/);
  });
});

describe('a stored instant no Date holds', () => {
  it('renders as an invalid date in tool text, never throws (a restored or hand-written row)', () => {
    const bad: MemoryRecord = {
      agentId: 'a',
      kind: 'fact',
      content: 'the harbour is calm',
      contentHash: 'bad',
      importance: 0.5,
      confidence: 1,
      tags: [],
      sessionId: null,
      seqFrom: null,
      seqTo: null,
      ...FRESH_MEMORY_FIELDS,
      id: 'bad',
      createdAt: 9e15,
      updatedAt: 9e15,
    };
    const result = { record: bad, score: 1, explanation: { final: 1 } } as unknown as Parameters<
      typeof renderSearch
    >[0][number];
    expect(renderSearch([result], 2000, '')).toContain('[fact invalid date id:bad]');
    expect(searchHits([result], 2000)[0]?.createdAt).toBe('invalid date');
  });
});
