/**
 * examples/langchain-rag runs as a user runs it — a Node process importing the built packages by name — with the
 * scripted model: each question is answered from the runbook passage that means the same thing.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const example = join(packageDir, '..', '..', 'examples', 'langchain-rag', 'rag.mjs');
let dir: string;
beforeAll(async () => {
  // Inside the package, so that `@engram/langchain` resolves to it and its dependencies resolve from here.
  dir = await mkdtemp(join(packageDir, '.example-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('examples/langchain-rag', () => {
  it('answers each question from the runbook passage that means the same, found by meaning', async () => {
    const script = join(dir, 'rag.mjs');
    await copyFile(example, script);
    const env = { ...process.env };
    delete env.ENGRAM_OPENAI_BASE_URL;
    const run = await runNode(script, [join(dir, 'memory.db')], { cwd: dir, env });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        '> How do I undo a bad release?',
        'According to the runbook: To roll back a deploy, run `deploy rollback --to previous` and watch the error rate for ten minutes.',
        '> When is someone paged?',
        'According to the runbook: The on-call engineer is paged when the checkout error rate stays above 2% for five minutes.',
        '',
      ].join('\n'),
    );
    expect(run.code).toBe(0);
  });
});
