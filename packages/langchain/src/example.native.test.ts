/**
 * examples/langchain-rag runs as a user runs it — a Node process importing the built packages by name — with the
 * scripted model: each question is answered from the runbook passage that means the same thing.
 */
import { fileURLToPath } from 'node:url';
import { runRepositoryExample } from '@engram/test-support';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('examples/langchain-rag', () => {
  it('answers each question from the runbook passage that means the same, found by meaning', async () => {
    const run = await runRepositoryExample(packageDir, 'langchain-rag/rag.mjs');
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
