/**
 * The model contract a user reads: the README names every model-output schema and shows, for each, an answer
 * that the validator accepts — so a fake or local model written from the README passes a maintenance pass.
 */
import { readFileSync } from 'node:fs';
import { MODEL_OUTPUT_SCHEMAS } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  candidatesOutputSchema,
  challengeOutputSchema,
  checkModelOutput,
  decisionOutputSchema,
  MODEL_OUTPUT_SCHEMA_NAMES,
  mergeOutputSchema,
  personaOutputSchema,
  reflectionOutputSchema,
} from './model-output.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

const SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  [MODEL_OUTPUT_SCHEMA_NAMES.candidates]: candidatesOutputSchema,
  [MODEL_OUTPUT_SCHEMA_NAMES.decision]: decisionOutputSchema,
  [MODEL_OUTPUT_SCHEMA_NAMES.challenge]: challengeOutputSchema,
  [MODEL_OUTPUT_SCHEMA_NAMES.merge]: mergeOutputSchema,
  [MODEL_OUTPUT_SCHEMA_NAMES.reflection]: reflectionOutputSchema,
  [MODEL_OUTPUT_SCHEMA_NAMES.persona]: personaOutputSchema,
};

/** The JSON example under the README heading of a schema name. */
function example(name: string): string | undefined {
  const at = README.indexOf(`### \`${name}\``);
  if (at < 0) return undefined;
  return /```json\n([\s\S]*?)\n```/.exec(README.slice(at))?.[1];
}

describe('the documented model contract', () => {
  it('the schema names are one closed list, shared with the observer reports', () => {
    expect(Object.values(MODEL_OUTPUT_SCHEMA_NAMES).sort()).toEqual([...MODEL_OUTPUT_SCHEMAS].sort());
  });

  it.each(Object.values(MODEL_OUTPUT_SCHEMA_NAMES))('the README shows a valid answer for %s', (name) => {
    const text = example(name);
    expect(text, `README example for ${name}`).toBeDefined();
    const schema = SCHEMAS[name];
    if (schema === undefined || text === undefined) throw new Error(`no schema or example for ${name}`);
    expect(checkModelOutput(schema, text)).toMatchObject({ ok: true });
  });

  it('a wrong answer is located by field and issue, never echoed', () => {
    expect(
      checkModelOutput(candidatesOutputSchema, '{"memories":[{"content":"x","kind":"note","importance":1}]}'),
    ).toEqual({
      ok: false,
      path: 'memories.0.kind',
      issue: 'invalid_value',
    });
    expect(checkModelOutput(mergeOutputSchema, 'SECRET not json')).toEqual({
      ok: false,
      path: '',
      issue: 'not_json',
    });
    const extra = checkModelOutput(challengeOutputSchema, '{"verdict":"keepBoth","SECRET-KEY":1}');
    expect(extra).toEqual({ ok: false, path: '', issue: 'unrecognized_keys' });
  });
});
