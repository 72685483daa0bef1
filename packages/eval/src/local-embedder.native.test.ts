/**
 * `--embedder local` end to end, offline: a tiny BERT-shaped sentence embedder written by local-onnx's test support
 * (`test-support/tiny-model.ts`: its mean-pooled vector is the text's bag of words) is loaded from a directory by
 * `createEvalEmbedder('local', …)` and by the built CLIs, measured on a small fixture, and cached under its profile.
 * A model found nowhere, a missing or invalid variable, and a width the model does not give are refused before the
 * run, naming the variable or the model and the option — never a variable's value.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TINY_EMBEDDING_DIMENSIONS,
  writeTinyEmbedder,
} from '../../local-onnx/src/test-support/tiny-model.js';
import { embedderFromFlags } from './cli/common.js';
import { createEvalEmbedder } from './embedders.js';
import { isEngramEvalError } from './errors.js';
import type { RetrievalFixture } from './fixture.js';
import type { RetrievalReport } from './report.js';
import { runFixture } from './runner.js';

const EVAL_FIXTURE = fileURLToPath(new URL('../dist/cli/eval-fixture.js', import.meta.url));
const EVAL_DATASET = fileURLToPath(new URL('../dist/cli/eval-dataset.js', import.meta.url));

const root = mkdtempSync(join(tmpdir(), 'engram-eval-local-'));
const user = join(root, 'user');
const pkg = join(root, 'pkg');
const model = writeTinyEmbedder(join(user, 'tiny-embedder'));
mkdirSync(pkg);
const realHubCache = process.env.HF_HUB_CACHE;
beforeAll(() => {
  // The machine's own Hugging Face cache stays out of these tests: a hub id is found nowhere.
  process.env.HF_HUB_CACHE = join(root, 'no-hub');
});
afterAll(() => {
  if (realHubCache === undefined) delete process.env.HF_HUB_CACHE;
  else process.env.HF_HUB_CACHE = realHubCache;
  rmSync(root, { recursive: true, force: true });
});

// Every word is in the tiny model's vocabulary; each query shares its words with one memory only (the vector
// arm's similarity threshold is 0.2).
const fixture: RetrievalFixture = {
  version: 1,
  name: 'local-tiny',
  vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
  corpus: [
    { id: 'm1', agentId: 'a', kind: 'fact', content: 'The deploy runs on Friday.', importance: 0.5 },
    { id: 'm2', agentId: 'a', kind: 'fact', content: 'Lunch is at noon.', importance: 0.5 },
    { id: 'm3', agentId: 'a', kind: 'fact', content: 'The billing service.', importance: 0.5 },
    { id: 'm4', agentId: 'a', kind: 'event', content: 'Cats, dogs: pets.', importance: 0.5 },
  ],
  queries: [
    { id: 'q1', agentId: 'a', text: 'deploy on Friday?', subsets: ['exact'], relevantIds: ['m1'] },
    { id: 'q2', agentId: 'a', text: 'billing', subsets: ['exact'], relevantIds: ['m3'] },
  ],
};
writeFileSync(join(user, 'fixture.json'), JSON.stringify(fixture));

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  ENGRAM_LOCAL_EMBEDDING_MODEL: model,
  ENGRAM_LOCAL_EMBEDDING_DIMENSIONS: String(TINY_EMBEDDING_DIMENSIONS),
  ...extra,
});

async function refusal(env: Record<string, string>): Promise<{ code: string; message: string }> {
  const error: unknown = await createEvalEmbedder('local', { env }).then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (!isEngramEvalError(error)) throw error;
  return error;
}

describe("createEvalEmbedder('local')", () => {
  it('loads the model from its directory and runs the vector arm with it, named in the report', async () => {
    const named = await createEvalEmbedder('local', { env: env() });
    expect(named.name).toBe('local');
    expect(named.embedder.profile).toEqual({ id: `local:${model}`, dimensions: TINY_EMBEDDING_DIMENSIONS });
    expect(named.cacheId).toBe(named.embedder.profile.id);
    const report = await runFixture({ fixture, embedder: { name: 'local', embedder: named.embedder } });
    expect(report.embedder).toEqual({
      name: 'local',
      id: `local:${model}`,
      dimensions: TINY_EMBEDDING_DIMENSIONS,
    });
    expect(report.vectors).toEqual({ embedded: 6, fromCache: 0 });
    // The vector arm alone finds each memory by the words it shares with the query.
    expect(report.variants.vector.queries.map((q) => [q.id, q.ranked[0]])).toEqual([
      ['q1', 'm1'],
      ['q2', 'm3'],
    ]);
    expect(report.variants.vector.overall.recallAt5).toBe(1);
  }, 60_000);

  it('files the vectors of another pooling or prefix under their own cache id, with the same profile', async () => {
    const plain = await createEvalEmbedder('local', { env: env() });
    const cls = await createEvalEmbedder('local', { env: env({ ENGRAM_LOCAL_EMBEDDING_POOLING: 'cls' }) });
    const prefixed = await createEvalEmbedder('local', {
      env: env({ ENGRAM_LOCAL_EMBEDDING_PREFIX: 'query: ' }),
    });
    expect(cls.embedder.profile).toEqual(plain.embedder.profile);
    expect(prefixed.embedder.profile).toEqual(plain.embedder.profile);
    expect(cls.cacheId).toBe(`${plain.cacheId}+cls`);
    expect(prefixed.cacheId).toMatch(/\+prefix-[0-9a-f]{12}$/);
    expect(prefixed.cacheId).not.toContain('query');
    // The [CLS] vector is not the mean: the setting reaches the model.
    const [a] = await plain.embedder.embed(['billing service']);
    const [b] = await cls.embedder.embed(['billing service']);
    expect(Array.from(a as Float32Array)).not.toEqual(Array.from(b as Float32Array));
  }, 60_000);

  it('names the missing variables, and an invalid one without its value', async () => {
    const missing = await refusal({});
    expect(missing.code).toBe('ENGRAM_EVAL_EMBEDDER_UNAVAILABLE');
    expect(missing.message).toContain('ENGRAM_LOCAL_EMBEDDING_MODEL');
    expect(missing.message).toContain('ENGRAM_LOCAL_EMBEDDING_DIMENSIONS');
    const noDimensions = await refusal({ ENGRAM_LOCAL_EMBEDDING_MODEL: model });
    expect(noDimensions.message).toMatch(/needs ENGRAM_LOCAL_EMBEDDING_DIMENSIONS/);
    expect(noDimensions.message).not.toContain(model);
    for (const [name, value] of [
      ['ENGRAM_LOCAL_EMBEDDING_DIMENSIONS', '3x2-canary'],
      ['ENGRAM_LOCAL_EMBEDDING_DIMENSIONS', '0'],
      ['ENGRAM_LOCAL_EMBEDDING_POOLING', 'max-canary'],
      ['ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD', 'yes-canary'],
    ] as const) {
      const error = await refusal(env({ [name]: value }));
      expect(error.code, name).toBe('ENGRAM_EVAL_EMBEDDER_UNAVAILABLE');
      expect(error.message, name).toMatch(new RegExp(`^${name} must be`));
      expect(error.message, name).not.toContain('canary');
    }
  }, 60_000);

  it('refuses a model found nowhere before the run, naming it and the option, and downloads nothing', async () => {
    for (const where of [join(root, 'no-such-model'), 'engram-test/not-downloaded']) {
      const error = await refusal(env({ ENGRAM_LOCAL_EMBEDDING_MODEL: where }));
      expect(error.code, where).toBe('ENGRAM_EVAL_EMBEDDER_UNAVAILABLE');
      expect(error.message, where).toContain(`"${where}"`);
      expect(error.message, where).toContain('nothing was downloaded');
      expect(error.message, where).toContain('ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD=true');
      expect((error as { cause?: { code?: string } }).cause?.code).toBe('ENGRAM_LOCAL_MODEL_NOT_FOUND');
    }
  }, 60_000);

  it('refuses dimensions the model does not give when it loads, naming the variable', async () => {
    const error = await refusal(env({ ENGRAM_LOCAL_EMBEDDING_DIMENSIONS: '16' }));
    expect(error.code).toBe('ENGRAM_EVAL_EMBEDDER_UNAVAILABLE');
    expect(error.message).toContain(`${TINY_EMBEDDING_DIMENSIONS} dimensions; 16 are configured`);
    expect(error.message).toContain('ENGRAM_LOCAL_EMBEDDING_DIMENSIONS');
  }, 60_000);

  it('--embedder local takes neither --threads nor --no-concepts', async () => {
    const flags = (entries: [string, string | true][]) => new Map<string, string | true>(entries);
    expect(
      await embedderFromFlags(
        flags([
          ['embedder', 'local'],
          ['threads', '2'],
        ]),
        env(),
      ),
    ).toEqual({ message: '--threads needs --embedder use' });
    expect(
      await embedderFromFlags(
        flags([
          ['embedder', 'local'],
          ['no-concepts', true],
        ]),
        env(),
      ),
    ).toEqual({ message: '--no-concepts needs --embedder deterministic' });
  }, 60_000);
});

describe('the CLIs with --embedder local', () => {
  /** Runs a built CLI from `pkg` (as pnpm does) with `INIT_CWD` = where the user stood. */
  const run = (cli: string, args: readonly string[], vars: Record<string, string>) =>
    runNode(cli, args, { cwd: pkg, env: { ...process.env, ...vars, INIT_CWD: user, NO_COLOR: '1' } });
  // A relative directory is where the user ran pnpm, and the profile id keeps it as given.
  const relative = env({ ENGRAM_LOCAL_EMBEDDING_MODEL: './tiny-embedder' });

  it('eval:fixture runs the fixture with the local model and caches its vectors', async () => {
    const args = ['--fixture', 'fixture.json', '--embedder', 'local', '--cache', 'vcache'];
    const first = await run(EVAL_FIXTURE, [...args, '--out', 'local-1.json'], relative);
    expect(first.stderr).toContain(`embedder local: local:./tiny-embedder, ${TINY_EMBEDDING_DIMENSIONS}d`);
    expect(first.code).toBe(0);
    expect(first.stdout.split('\n')[0]).toBe(
      `local-tiny v1 (local:./tiny-embedder, ${TINY_EMBEDDING_DIMENSIONS}d)`,
    );
    const a = JSON.parse(readFileSync(join(user, 'local-1.json'), 'utf8')) as RetrievalReport;
    expect(a.embedder).toEqual({
      name: 'local',
      id: 'local:./tiny-embedder',
      dimensions: TINY_EMBEDDING_DIMENSIONS,
    });
    expect(a.variants.vector.queries.map((q) => q.ranked[0])).toEqual(['m1', 'm3']);
    expect(a.vectors).toEqual({ embedded: 6, fromCache: 0 });
    const second = await run(EVAL_FIXTURE, [...args, '--out', 'local-2.json'], relative);
    expect(second.code).toBe(0);
    const b = JSON.parse(readFileSync(join(user, 'local-2.json'), 'utf8')) as RetrievalReport;
    expect(b.vectors).toEqual({ embedded: 0, fromCache: 6 });
    expect(b.variants).toEqual(a.variants);
  }, 120_000);

  it('eval:dataset runs a dataset with the local model', async () => {
    const squad = {
      version: 'v1.0',
      data: [
        {
          paragraphs: [
            {
              id: 'P1',
              context: 'The deploy runs on Friday.',
              qas: [{ id: 'Q1', question: 'deploy Friday?' }],
            },
            { id: 'P2', context: 'Lunch is at noon.', qas: [{ id: 'Q2', question: 'lunch at noon?' }] },
          ],
        },
      ],
    };
    writeFileSync(join(user, 'squad.json'), JSON.stringify(squad));
    const result = await run(
      EVAL_DATASET,
      ['cmrc', 'squad.json', 'cmrc-local.json', '--embedder', 'local', '--no-cache'],
      env(),
    );
    expect(result.code).toBe(0);
    const report = JSON.parse(readFileSync(join(user, 'cmrc-local.json'), 'utf8')) as RetrievalReport;
    expect(report.embedder).toEqual({
      name: 'local',
      id: `local:${model}`,
      dimensions: TINY_EMBEDDING_DIMENSIONS,
    });
    expect(report.variants.vector.queries.map((q) => q.ranked[0])).toEqual(['P1', 'P2']);
  }, 120_000);

  it('exits 1 with the typed error for a model found nowhere, writing no report', async () => {
    const result = await run(
      EVAL_FIXTURE,
      ['--fixture', 'fixture.json', '--out', 'none.json', '--embedder', 'local'],
      env({ ENGRAM_LOCAL_EMBEDDING_MODEL: 'engram-test/not-downloaded', HF_HUB_CACHE: join(root, 'no-hub') }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ENGRAM_EVAL_EMBEDDER_UNAVAILABLE: --embedder local: ');
    expect(result.stderr).toContain('"engram-test/not-downloaded"');
    expect(result.stderr).toContain('ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD=true');
    expect(() => readFileSync(join(user, 'none.json'))).toThrow();
  }, 120_000);
});
