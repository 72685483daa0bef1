/**
 * Which embedder a database gets when the environment configures it (`openEngine({ env })`, as the CLI, the MCP
 * server and the demo open theirs). A new database gets the one the user asked for (`ENGRAM_EMBEDDER`), else
 * the OpenAI-compatible one when the environment configures it, else the offline USE-lite embedder. An
 * existing file keeps the embedder recorded in it (its embedding fingerprint), whatever the default is now.
 * Pure: no I/O; errors name embedder profiles and settings, never content.
 */
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { USE_LITE_PROFILE } from '@engram/embedder-use';
import { EngramMemoryError, engramErrorCode } from './errors.js';

/** The embedders a user can ask for, the default first. */
export const EMBEDDER_CHOICES: readonly ['use', 'deterministic', 'openai'] = [
  'use',
  'deterministic',
  'openai',
] as const;
/** One embedder a user can ask for. */
export type EmbedderChoice = (typeof EMBEDDER_CHOICES)[number];

/** The environment variable that picks the embedder of new files. */
export const EMBEDDER_ENV_VAR = 'ENGRAM_EMBEDDER';

/** An embedder profile as the store records it. */
export interface EmbedderProfile {
  readonly id: string;
  readonly dimensions: number;
}

/** The profile of each built-in choice (the OpenAI-compatible one depends on its configuration). */
export const BUILT_IN_PROFILES: {
  readonly use: EmbedderProfile;
  readonly deterministic: EmbedderProfile;
} = { use: USE_LITE_PROFILE, deterministic: DETERMINISTIC_PROFILE };

function isChoice(value: string): value is EmbedderChoice {
  return (EMBEDDER_CHOICES as readonly string[]).includes(value);
}

/** `id (N d)`, as the CLI prints an embedder. */
export function profileLabel(profile: EmbedderProfile): string {
  return `${profile.id} (${profile.dimensions} d)`;
}

/**
 * The embedder asked for by `ENGRAM_EMBEDDER` (case-insensitive), or null when it is unset or empty. Any
 * other value is `ENGRAM_MEMORY_INVALID_CONFIG`, naming the variable and the accepted values.
 */
export function embedderChoiceFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): EmbedderChoice | null {
  const raw = env[EMBEDDER_ENV_VAR]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return null;
  if (isChoice(raw)) return raw;
  throw new EngramMemoryError(
    'ENGRAM_MEMORY_INVALID_CONFIG',
    `${EMBEDDER_ENV_VAR} must be one of ${EMBEDDER_CHOICES.join(', ')}`,
  );
}

function same(a: EmbedderProfile, b: EmbedderProfile): boolean {
  return a.id === b.id && a.dimensions === b.dimensions;
}

/** What {@link chooseEmbedder} decides from. */
export interface EmbedderSituation {
  /** The profile recorded in an existing file; `'new'` for a new file; null for a file recorded without one. */
  readonly recorded: EmbedderProfile | null | 'new';
  /** What the user asked for (`ENGRAM_EMBEDDER` or the caller), or null. */
  readonly requested: EmbedderChoice | null;
  /** The OpenAI-compatible embedder's profile when the environment configures one, else null. */
  readonly remote: EmbedderProfile | null;
}

function needs(profile: EmbedderProfile): string {
  if (same(profile, BUILT_IN_PROFILES.use)) return `${EMBEDDER_ENV_VAR}=use`;
  if (same(profile, BUILT_IN_PROFILES.deterministic)) return `${EMBEDDER_ENV_VAR}=deterministic`;
  const model = profile.id.startsWith('openai-compatible:')
    ? profile.id.slice('openai-compatible:'.length)
    : null;
  return model === null || model === ''
    ? `an OpenAI-compatible embedder with that profile (ENGRAM_OPENAI_EMBEDDING_MODEL and ENGRAM_OPENAI_EMBEDDING_DIMENSIONS=${profile.dimensions})`
    : `ENGRAM_OPENAI_EMBEDDING_MODEL=${model} with ENGRAM_OPENAI_EMBEDDING_DIMENSIONS=${profile.dimensions}`;
}

/**
 * Picks the embedder of a file. New file: the requested one, else `openai` when configured, else `use`.
 * Existing file: the one its fingerprint records — `ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE` when that embedder is
 * not available here (it says which one the file needs), `ENGRAM_MEMORY_EMBEDDER_MISMATCH` when the user asked
 * for another one.
 */
export function chooseEmbedder(situation: EmbedderSituation): EmbedderChoice {
  const { recorded, requested, remote } = situation;
  if (requested === 'openai' && remote === null) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
      `${EMBEDDER_ENV_VAR}=openai needs ENGRAM_OPENAI_EMBEDDING_MODEL and ENGRAM_OPENAI_EMBEDDING_DIMENSIONS`,
    );
  }
  if (recorded === 'new') return requested ?? (remote === null ? 'use' : 'openai');
  if (recorded === null) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
      'the database records no embedder (it was made without a vector index); use another --db',
    );
  }
  let found: EmbedderChoice | null = null;
  if (same(recorded, BUILT_IN_PROFILES.use)) found = 'use';
  else if (same(recorded, BUILT_IN_PROFILES.deterministic)) found = 'deterministic';
  else if (remote !== null && same(recorded, remote)) found = 'openai';
  if (found === null) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
      `the database was made with the embedder ${profileLabel(recorded)}, which is not configured; it needs ${needs(recorded)} (or use another --db)`,
    );
  }
  if (requested !== null && requested !== found) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
      `the database was made with the embedder ${profileLabel(recorded)}, not ${EMBEDDER_ENV_VAR}=${requested}; it needs ${needs(recorded)} (or use another --db)`,
    );
  }
  return found;
}

/**
 * The error for a database another process bound to another embedder between the check and the open; any other
 * error as is. A vector index mismatch is another code (`ENGRAM_STORE_VECTOR_INDEX_MISMATCH`) and passes as the
 * store reports it: opened without a quantization setting, a store adopts the file's (also after another
 * process's `resetVectorIndex`) and never meets one itself.
 */
export function embedderMismatch(error: unknown, embedding: EmbedderProfile | undefined): unknown {
  if (engramErrorCode(error) !== 'ENGRAM_STORE_FINGERPRINT_MISMATCH') return error;
  return new EngramMemoryError(
    'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
    `the database was indexed with another embedder than ${embedding?.id ?? 'the one it records'}; use another --db or re-index it`,
    { cause: error },
  );
}
