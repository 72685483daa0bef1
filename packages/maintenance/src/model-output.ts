import { EXTRACTION_DECISIONS, type ModelOutputSchema } from '@engram/contracts';
import { z } from 'zod';

/**
 * The `jsonSchema.name` of every structured answer the model is asked for: a fake model (a test double, a
 * scripted local model) answers by this name with JSON of the matching shape.
 */
export const MODEL_OUTPUT_SCHEMA_NAMES: {
  readonly candidates: 'memory_candidates';
  readonly decision: 'memory_decision';
  readonly challenge: 'memory_challenge';
  readonly merge: 'memory_merge';
  readonly reflection: 'memory_reflection';
  readonly persona: 'memory_persona';
} = Object.freeze({
  candidates: 'memory_candidates',
  decision: 'memory_decision',
  challenge: 'memory_challenge',
  merge: 'memory_merge',
  reflection: 'memory_reflection',
  persona: 'memory_persona',
});
/** One schema name of {@link MODEL_OUTPUT_SCHEMA_NAMES}. */
export type ModelOutputSchemaName =
  (typeof MODEL_OUTPUT_SCHEMA_NAMES)[keyof typeof MODEL_OUTPUT_SCHEMA_NAMES];

/** Longest memory content a model may propose. */
export const MAX_MODEL_CONTENT_CHARS = 2000;

const content = z.string().trim().min(1).max(MAX_MODEL_CONTENT_CHARS);
const importance = z.number().min(0).max(1);

/** Candidate memories extracted from a chunk of turns (at most 8). */
export const candidatesOutputSchema: z.ZodType<{
  memories: { content: string; kind: 'fact' | 'semantic' | 'episodic'; importance: number }[];
}> = z
  .object({
    memories: z
      .array(z.object({ content, kind: z.enum(['fact', 'semantic', 'episodic']), importance }).strict())
      .max(8),
  })
  .strict();
/** A validated candidate list. */
export type CandidatesOutput = z.infer<typeof candidatesOutputSchema>;

/** A decision for one candidate against its neighbours. */
export const decisionOutputSchema: z.ZodType<{
  decision: (typeof EXTRACTION_DECISIONS)[number];
  targetId: string | null;
  content: string | null;
}> = z
  .object({
    decision: z.enum(EXTRACTION_DECISIONS),
    /** A neighbour id; required for UPDATE, SUPERSEDE and CHALLENGE. */
    targetId: z.string().min(1).max(200).nullable(),
    /** The new text for UPDATE / SUPERSEDE (the candidate's text when null). */
    content: content.nullable(),
  })
  .strict();
/** A validated decision (before the neighbour check). */
export type DecisionOutput = z.infer<typeof decisionOutputSchema>;

/** The verdict on a challenged memory and its challenger. */
export const challengeOutputSchema: z.ZodType<{ verdict: 'keepExisting' | 'keepChallenger' | 'keepBoth' }> = z
  .object({ verdict: z.enum(['keepExisting', 'keepChallenger', 'keepBoth']) })
  .strict();
/** A validated challenge verdict. */
export type ChallengeOutput = z.infer<typeof challengeOutputSchema>;

/** Whether two similar memories say the same thing, and their merged text. */
export const mergeOutputSchema: z.ZodType<{ merge: boolean; content: string | null }> = z
  .object({ merge: z.boolean(), content: content.nullable() })
  .strict()
  .refine((v) => !v.merge || v.content !== null, { message: 'merged content required' });
/** A validated merge answer. */
export type MergeOutput = z.infer<typeof mergeOutputSchema>;

/** Reflections over recent memories (at most 3). */
export const reflectionOutputSchema: z.ZodType<{ reflections: { content: string; importance: number }[] }> = z
  .object({ reflections: z.array(z.object({ content, importance }).strict()).max(3) })
  .strict();
/** A validated reflection answer. */
export type ReflectionOutput = z.infer<typeof reflectionOutputSchema>;

/** A persona description distilled from the agent's facts. */
export const personaOutputSchema: z.ZodType<{ persona: string }> = z
  .object({ persona: z.string().trim().min(1).max(4000) })
  .strict();
/** A validated persona answer. */
export type PersonaOutput = z.infer<typeof personaOutputSchema>;

/** The JSON Schema handed to the model port for a zod schema (draft 2020-12, without `$schema`). */
export function jsonSchemaOf(schema: z.ZodType): Readonly<Record<string, unknown>> {
  const out = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/** The result of validating model output: the data, or nothing (the output is never echoed). */
export type ModelOutputResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false };

const FENCE = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i;

/** Parses and validates a model's text: JSON (optionally inside one Markdown code fence), then the zod schema. */
export function parseModelOutput<T>(schema: z.ZodType<T>, text: string): ModelOutputResult<T> {
  const checked = checkModelOutput(schema, text);
  return checked.ok ? checked : { ok: false };
}

/**
 * Where a model answer failed validation, never what it said: `path` is the failing field as dotted schema
 * keys and array indices (`memories.0.kind`; empty for the whole answer), `issue` is `not_json` for text
 * that is not JSON, else the validator's issue code (`invalid_type`, `invalid_value`, `too_big`,
 * `unrecognized_keys` …).
 */
export interface ModelOutputFailure {
  readonly path: string;
  readonly issue: string;
}

/** An invalid model answer in a pass result: the schema it was asked for and where it failed. */
export interface InvalidModelOutput extends ModelOutputFailure {
  readonly schema: ModelOutputSchema;
}

/** A path segment of our own schemas (a key or an index); anything else is masked. */
const SAFE_SEGMENT = /^(?:[A-Za-z][A-Za-z0-9_]{0,39}|\d{1,4})$/;

/** Like {@link parseModelOutput}, and on failure says which field failed and how (no content). */
export function checkModelOutput<T>(
  schema: z.ZodType<T>,
  text: string,
): { readonly ok: true; readonly value: T } | ({ readonly ok: false } & ModelOutputFailure) {
  const fenced = FENCE.exec(text);
  let raw: unknown;
  try {
    raw = JSON.parse(fenced?.[1] ?? text);
  } catch {
    return { ok: false, path: '', issue: 'not_json' };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const first = parsed.error.issues[0];
  const path = (first?.path ?? [])
    .map((segment) => {
      const text = typeof segment === 'symbol' ? '' : String(segment);
      return SAFE_SEGMENT.test(text) ? text : '?';
    })
    .join('.');
  const issue = typeof first?.code === 'string' && /^[a-z_]{1,40}$/.test(first.code) ? first.code : 'invalid';
  return { ok: false, path, issue };
}

/** A decision checked against the neighbours it may reference. */
export type CheckedDecision =
  | { readonly decision: 'ADD'; readonly content: string }
  | { readonly decision: 'NOOP' }
  | { readonly decision: 'UPDATE' | 'SUPERSEDE'; readonly targetId: string; readonly content: string }
  | { readonly decision: 'CHALLENGE'; readonly targetId: string };

/**
 * Checks a decision against the neighbour ids: UPDATE, SUPERSEDE and CHALLENGE must name one of them;
 * ADD and NOOP ignore `targetId`. Returns null when the decision is invalid.
 */
export function checkDecision(
  output: DecisionOutput,
  neighbourIds: ReadonlySet<string>,
  candidateContent: string,
): CheckedDecision | null {
  switch (output.decision) {
    case 'ADD':
      return { decision: 'ADD', content: output.content ?? candidateContent };
    case 'NOOP':
      return { decision: 'NOOP' };
    case 'UPDATE':
    case 'SUPERSEDE':
      if (output.targetId === null || !neighbourIds.has(output.targetId)) return null;
      return {
        decision: output.decision,
        targetId: output.targetId,
        content: output.content ?? candidateContent,
      };
    case 'CHALLENGE':
      if (output.targetId === null || !neighbourIds.has(output.targetId)) return null;
      return { decision: 'CHALLENGE', targetId: output.targetId };
    default:
      return null;
  }
}
