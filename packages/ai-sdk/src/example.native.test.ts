/**
 * examples/ai-sdk-chat runs as a user runs it — a Node process importing the built packages by name — with the
 * scripted model: the second question is answered from the memory the first one wrote.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const example = join(packageDir, '..', '..', 'examples', 'ai-sdk-chat', 'chat.mjs');
let dir: string;
beforeAll(async () => {
  // Inside the package, so that `@engram/ai-sdk` resolves to it and its dependencies resolve from here.
  dir = await mkdtemp(join(packageDir, '.example-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('examples/ai-sdk-chat', () => {
  it('remembers through the tool, then answers from what the middleware injected', async () => {
    const script = join(dir, 'chat.mjs');
    await copyFile(example, script);
    const env = { ...process.env };
    delete env.ENGRAM_OPENAI_BASE_URL;
    const run = await runNode(script, [join(dir, 'memory.db')], { cwd: dir, env });
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
