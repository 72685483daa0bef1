/** Which embedder a file gets: the one it records; for a new file the one asked for, else OpenAI, else USE-lite. */
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PROFILES, chooseEmbedder, embedderChoiceFromEnv } from './embedder-choice.js';
import { isEngramMemoryError } from './errors.js';

const REMOTE = { id: 'openai-compatible:text-embedding-3-small', dimensions: 1536 };

function failure(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (!isEngramMemoryError(error)) throw error;
    return { code: error.code, message: error.message };
  }
  throw new Error('expected a typed error');
}

describe('chooseEmbedder', () => {
  it('gives a new file USE-lite by default, the OpenAI-compatible one when configured, and what the user asks for first', () => {
    expect(chooseEmbedder({ recorded: 'new', requested: null, remote: null })).toBe('use');
    expect(chooseEmbedder({ recorded: 'new', requested: null, remote: REMOTE })).toBe('openai');
    expect(chooseEmbedder({ recorded: 'new', requested: 'deterministic', remote: REMOTE })).toBe(
      'deterministic',
    );
    expect(chooseEmbedder({ recorded: 'new', requested: 'openai', remote: REMOTE })).toBe('openai');
  });

  it('keeps the embedder an existing file records, whatever the default or the provider environment says', () => {
    const deterministic = BUILT_IN_PROFILES.deterministic;
    expect(chooseEmbedder({ recorded: deterministic, requested: null, remote: null })).toBe('deterministic');
    expect(chooseEmbedder({ recorded: deterministic, requested: null, remote: REMOTE })).toBe(
      'deterministic',
    );
    expect(chooseEmbedder({ recorded: BUILT_IN_PROFILES.use, requested: null, remote: REMOTE })).toBe('use');
    expect(chooseEmbedder({ recorded: REMOTE, requested: null, remote: REMOTE })).toBe('openai');
    expect(chooseEmbedder({ recorded: deterministic, requested: 'deterministic', remote: null })).toBe(
      'deterministic',
    );
  });

  it('says which embedder a file needs when it is not available or not the one asked for', () => {
    expect(failure(() => chooseEmbedder({ recorded: REMOTE, requested: null, remote: null }))).toEqual({
      code: 'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
      message:
        'the database was made with the embedder openai-compatible:text-embedding-3-small (1536 d), which is not configured; it needs ENGRAM_OPENAI_EMBEDDING_MODEL=text-embedding-3-small with ENGRAM_OPENAI_EMBEDDING_DIMENSIONS=1536 (or use another --db)',
    });
    // Same model, other dimensions: another profile.
    const narrower = { ...REMOTE, dimensions: 256 };
    expect(failure(() => chooseEmbedder({ recorded: narrower, requested: null, remote: REMOTE })).code).toBe(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
    );
    expect(
      failure(() =>
        chooseEmbedder({ recorded: BUILT_IN_PROFILES.use, requested: 'deterministic', remote: null }),
      ),
    ).toEqual({
      code: 'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
      message:
        'the database was made with the embedder use-lite-512-v1 (512 d), not ENGRAM_EMBEDDER=deterministic; it needs ENGRAM_EMBEDDER=use (or use another --db)',
    });
    expect(failure(() => chooseEmbedder({ recorded: null, requested: null, remote: null })).code).toBe(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
    );
    expect(failure(() => chooseEmbedder({ recorded: 'new', requested: 'openai', remote: null }))).toEqual({
      code: 'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
      message:
        'ENGRAM_EMBEDDER=openai needs ENGRAM_OPENAI_EMBEDDING_MODEL and ENGRAM_OPENAI_EMBEDDING_DIMENSIONS',
    });
  });
});

describe('embedderChoiceFromEnv', () => {
  it('reads ENGRAM_EMBEDDER case-insensitively, treats empty as unset, and rejects other values without echoing them', () => {
    expect(embedderChoiceFromEnv({})).toBeNull();
    expect(embedderChoiceFromEnv({ ENGRAM_EMBEDDER: '  ' })).toBeNull();
    expect(embedderChoiceFromEnv({ ENGRAM_EMBEDDER: ' USE ' })).toBe('use');
    expect(embedderChoiceFromEnv({ ENGRAM_EMBEDDER: 'deterministic' })).toBe('deterministic');
    expect(embedderChoiceFromEnv({ ENGRAM_EMBEDDER: 'openai' })).toBe('openai');
    const invalid = failure(() => embedderChoiceFromEnv({ ENGRAM_EMBEDDER: 'secret-model' }));
    expect(invalid.code).toBe('ENGRAM_MEMORY_INVALID_CONFIG');
    expect(invalid.message).not.toContain('secret-model');
  });
});
