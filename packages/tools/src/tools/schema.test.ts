import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inputOf, MEMORY_TOOL_DEFINITIONS, MEMORY_TOOL_NAMES, parseToolArguments } from './schema.js';

describe('the memory tools’ schemas, built on first use', () => {
  it('give the same zod schema on every use, and it validates as the tool call does', () => {
    const first = inputOf('memory_search');
    expect(inputOf('memory_search')).toBe(first);
    expect(first.safeParse({ query: 'pnpm' })).toEqual({
      success: true,
      data: { query: 'pnpm', limit: 5, maxChars: 4000 },
    });
    expect(first.safeParse({ query: '' }).success).toBe(false);
    expect(parseToolArguments('memory_search', { query: 'pnpm', limit: 26 })).toEqual({
      ok: false,
      text: 'Invalid arguments for memory_search: "limit" must be at most 25.',
    });
    // Each tool has its own schema.
    expect(new Set(MEMORY_TOOL_NAMES.map((name) => inputOf(name))).size).toBe(MEMORY_TOOL_NAMES.length);
  });

  it('give each definition one frozen JSON Schema, the one derived from the zod schema', () => {
    for (const definition of MEMORY_TOOL_DEFINITIONS) {
      const schema = definition.inputSchema;
      expect(definition.inputSchema).toBe(schema);
      expect(Object.isFrozen(definition)).toBe(true);
      expect(Object.isFrozen(schema)).toBe(true);
      const { $schema: _ignored, ...derived } = z.toJSONSchema(inputOf(definition.name), { io: 'input' });
      expect(schema).toEqual(derived);
    }
  });

  it('serialize, spread and clone with their JSON Schema, as plain data would', () => {
    const search = MEMORY_TOOL_DEFINITIONS[0]!;
    const plain = {
      name: search.name,
      description: search.description,
      inputSchema: search.inputSchema,
    };
    expect(Object.keys(search)).toEqual(['name', 'description', 'inputSchema']);
    expect(JSON.parse(JSON.stringify(MEMORY_TOOL_DEFINITIONS))[0]).toEqual(JSON.parse(JSON.stringify(plain)));
    expect({ ...search }).toEqual(plain);
    expect(structuredClone(search)).toEqual(plain);
    expect(() => {
      (search as { inputSchema: unknown }).inputSchema = {};
    }).toThrow(TypeError);
  });
});
