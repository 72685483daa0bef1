import { describe, expect, it } from 'vitest';
import {
  candidatesOutputSchema,
  challengeOutputSchema,
  checkDecision,
  decisionOutputSchema,
  jsonSchemaOf,
  mergeOutputSchema,
  parseModelOutput,
  personaOutputSchema,
  reflectionOutputSchema,
} from './model-output.js';

describe('parseModelOutput', () => {
  it('accepts valid JSON, also inside one code fence', () => {
    const text = '{"memories":[{"content":"Uses pnpm","kind":"fact","importance":0.8}]}';
    expect(parseModelOutput(candidatesOutputSchema, text)).toEqual({
      ok: true,
      value: { memories: [{ content: 'Uses pnpm', kind: 'fact', importance: 0.8 }] },
    });
    expect(parseModelOutput(candidatesOutputSchema, `\`\`\`json\n${text}\n\`\`\``).ok).toBe(true);
  });

  it.each([
    ['not JSON', 'sure! here you go'],
    ['wrong kind', '{"memories":[{"content":"x","kind":"persona","importance":0.5}]}'],
    ['importance out of range', '{"memories":[{"content":"x","kind":"fact","importance":1.5}]}'],
    ['empty content', '{"memories":[{"content":"   ","kind":"fact","importance":0.5}]}'],
    ['extra field', '{"memories":[],"note":"x"}'],
    [
      'too many',
      JSON.stringify({
        memories: Array.from({ length: 9 }, () => ({ content: 'x', kind: 'fact', importance: 0 })),
      }),
    ],
    ['missing field', '{}'],
  ])('rejects %s without echoing it', (_name, text) => {
    expect(parseModelOutput(candidatesOutputSchema, text)).toEqual({ ok: false });
  });

  it('validates the other schemas', () => {
    expect(
      parseModelOutput(decisionOutputSchema, '{"decision":"ADD","targetId":null,"content":null}').ok,
    ).toBe(true);
    expect(
      parseModelOutput(decisionOutputSchema, '{"decision":"MERGE","targetId":null,"content":null}').ok,
    ).toBe(false);
    expect(parseModelOutput(challengeOutputSchema, '{"verdict":"keepBoth"}').ok).toBe(true);
    expect(parseModelOutput(challengeOutputSchema, '{"verdict":"both"}').ok).toBe(false);
    expect(parseModelOutput(mergeOutputSchema, '{"merge":true,"content":"x"}').ok).toBe(true);
    expect(parseModelOutput(mergeOutputSchema, '{"merge":true,"content":null}').ok).toBe(false);
    expect(parseModelOutput(mergeOutputSchema, '{"merge":false,"content":null}').ok).toBe(true);
    expect(
      parseModelOutput(reflectionOutputSchema, '{"reflections":[{"content":"x","importance":0.4}]}').ok,
    ).toBe(true);
    expect(parseModelOutput(personaOutputSchema, '{"persona":""}').ok).toBe(false);
  });
});

describe('checkDecision', () => {
  const ids = new Set(['m1', 'm2']);
  it('requires a neighbour id for UPDATE, SUPERSEDE and CHALLENGE', () => {
    expect(checkDecision({ decision: 'UPDATE', targetId: 'm1', content: 'new' }, ids, 'cand')).toEqual({
      decision: 'UPDATE',
      targetId: 'm1',
      content: 'new',
    });
    expect(checkDecision({ decision: 'SUPERSEDE', targetId: 'm2', content: null }, ids, 'cand')).toEqual({
      decision: 'SUPERSEDE',
      targetId: 'm2',
      content: 'cand',
    });
    expect(checkDecision({ decision: 'CHALLENGE', targetId: 'm1', content: null }, ids, 'cand')).toEqual({
      decision: 'CHALLENGE',
      targetId: 'm1',
    });
    expect(checkDecision({ decision: 'UPDATE', targetId: null, content: 'x' }, ids, 'cand')).toBeNull();
    expect(checkDecision({ decision: 'SUPERSEDE', targetId: 'other', content: 'x' }, ids, 'cand')).toBeNull();
    expect(checkDecision({ decision: 'CHALLENGE', targetId: 'zzz', content: null }, ids, 'cand')).toBeNull();
  });

  it('accepts ADD and NOOP without a target', () => {
    expect(checkDecision({ decision: 'ADD', targetId: null, content: null }, ids, 'cand')).toEqual({
      decision: 'ADD',
      content: 'cand',
    });
    expect(checkDecision({ decision: 'NOOP', targetId: null, content: null }, ids, 'cand')).toEqual({
      decision: 'NOOP',
    });
  });
});

describe('jsonSchemaOf', () => {
  it('produces a closed JSON Schema object without $schema', () => {
    const schema = jsonSchemaOf(decisionOutputSchema);
    expect(schema.$schema).toBeUndefined();
    expect(schema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['decision', 'targetId', 'content'],
    });
  });
});
