/**
 * Validation of the values the `engram` command line takes: agent and memory ids, archive pointers, numbers,
 * texts, tags and paths. Each failure is an {@link ArgumentError} whose message names the flag, never the value.
 */
import { isAbsolute, join, resolve } from 'node:path';
import {
  checkAgentId,
  checkAgentIdForm,
  checkMemoryId,
  type IdentifierProblem,
  isValidTag,
  MAX_AGENT_ID_LENGTH,
  MAX_MEMORY_ID_LENGTH,
  MEMORY_KINDS,
  type MemoryKind,
} from '@engram/contracts';
import { z } from 'zod';

/** A mistake in the arguments; the parser turns it into a one-line message and a usage hint. */
export class ArgumentError extends Error {}

/** The message of each identifier problem (a CLI argument is always a string). */
function identifierMessage(problem: IdentifierProblem, max: number): string {
  switch (problem) {
    case 'notString':
    case 'blank':
      return 'must not be empty';
    case 'tooLong':
      return `must be at most ${max} character${max === 1 ? '' : 's'}`;
    case 'controlCharacter':
      return 'must not contain control characters';
    case 'loneSurrogate':
      return 'must not contain a lone surrogate';
  }
}

/** An identifier checked by a contracts rule: exactly what the store accepts. */
function idSchema(
  rule: (value: unknown) => IdentifierProblem | null,
  max: number,
): z.ZodType<string, string> {
  return z.string().check((ctx) => {
    const problem = rule(ctx.value);
    if (problem !== null)
      ctx.issues.push({ code: 'custom', input: ctx.value, message: identifierMessage(problem, max) });
  });
}

/** An agent id or a session id, as the store accepts it. */
export const agentSchema: z.ZodType<string, string> = idSchema(checkAgentId, MAX_AGENT_ID_LENGTH).check(
  (ctx) => {
    const problem = checkAgentIdForm(ctx.value);
    if (problem !== null) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message:
          problem === 'surroundingWhitespace'
            ? 'must not start or end with whitespace'
            : 'must be in Unicode normal form NFC',
      });
    }
  },
);
/** A memory id, as the store accepts it. */
export const memoryIdSchema: z.ZodType<string, string> = idSchema(checkMemoryId, MAX_MEMORY_ID_LENGTH);

function intSchema(min: number, max: number): z.ZodType<number, string> {
  return z
    .string()
    .regex(/^\d{1,9}$/, { error: `must be an integer from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be an integer from ${min} to ${max}` })
        .max(max, { error: `must be an integer from ${min} to ${max}` }),
    );
}

/** A TCP port, 0 for any. */
export const portSchema: z.ZodType<number, string> = intSchema(0, 65_535);
/** A result count. */
export const limitSchema: z.ZodType<number, string> = intSchema(1, 100);
/** A page size of `engram list`. */
export const pageSchema: z.ZodType<number, string> = intSchema(1, 10_000);
/** A memory kind. */
export const kindSchema: z.ZodType<MemoryKind, string> = z
  .string()
  .pipe(z.enum(MEMORY_KINDS, { error: `must be one of ${MEMORY_KINDS.join(', ')}` }));
/** A non-blank text of at most `max` characters. */
export const textSchema = (max: number): z.ZodType<string, string> =>
  z
    .string()
    .refine((v) => v.trim() !== '', { error: 'must not be empty' })
    .refine((v) => v.length <= max, { error: `must be at most ${max} character${max === 1 ? '' : 's'}` });
/** Why a memory changed: one line of at most 500 characters, as the store keeps it. */
export const reasonSchema: z.ZodType<string, string> = textSchema(500).refine(
  (v) => !/[\u0000-\u001f\u007f]/u.test(v),
  { error: 'must be one line without control characters' },
);
/** A `prefix:value` tag, as the store accepts it. */
export const tagSchema: z.ZodType<string, string> = z
  .string()
  .refine((v) => isValidTag(v), { error: 'must look like prefix:value (e.g. file:src/a.ts)' });
/** A file path. */
export const fileSchema: z.ZodType<string, string> = z
  .string()
  .refine((v) => v.trim() !== '' && !v.includes('\u0000'), { error: 'must be a file path' });

/** Parses `value` with `schema`; throws an {@link ArgumentError} naming `label` when it does not fit. */
export function check<T>(schema: z.ZodType<T, string>, value: string, label: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ArgumentError(`${label} ${parsed.error.issues[0]?.message ?? 'is invalid'}`);
}

/** Resolves a database path against the working directory. */
export function resolveDbPath(cwd: string, db: string | undefined, fallback: string): string {
  // A PostgreSQL database is named by its URL, kept as it is.
  if (db !== undefined && /^postgres(ql)?:\/\//.test(db)) return db;
  const file = db ?? fallback;
  return isAbsolute(file) ? file : resolve(join(cwd, file));
}
