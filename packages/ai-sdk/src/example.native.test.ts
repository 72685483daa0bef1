/**
 * examples/ai-sdk-chat runs as a user runs it — a Node process importing the built packages by name — with the
 * scripted model: the second question is answered from the memory the first one wrote.
 */
import { fileURLToPath } from 'node:url';
import { runRepositoryExample } from '@engram/test-support';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('examples/ai-sdk-chat', () => {
  it('remembers through the tool, then answers from what the middleware injected', async () => {
    const run = await runRepositoryExample(packageDir, 'ai-sdk-chat/chat.mjs');
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        '> Please remember that my favourite editor is Helix.',
        'Noted.',
        '> Which editor do I like?',
        "From memory: The user's favourite editor is Helix.",
        '',
      ].join('\n'),
    );
    expect(run.code).toBe(0);
  });
});
