/**
 * The README's five-line example, run as a user runs it: a Node process importing `@engram/memory` (the built
 * package), with the default offline embedder (USE-lite). It must print the remembered fact for a question
 * that shares almost no words with it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
let dir: string;
beforeAll(async () => {
  // Inside the package, so that `import '@engram/memory'` resolves to this package (self-reference).
  dir = await mkdtemp(join(packageDir, '.example-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The first TypeScript block of a README. */
async function readmeExample(path = join(packageDir, 'README.md')): Promise<string> {
  const readme = await readFile(path, 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('the README has no TypeScript block');
  return block;
}

describe('the README example', () => {
  it('is five lines and prints the fact it remembered, found by meaning', async () => {
    const example = await readmeExample();
    expect(example.trim().split('\n')).toHaveLength(5);
    const script = join(dir, 'example.mjs');
    await writeFile(script, example);
    const run = await runNode(script, [], { cwd: dir });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('The API server listens on port 8080.\n');
    expect(run.code).toBe(0);
  });

  it('is the first thing the repository README shows', async () => {
    const root = await readmeExample(join(packageDir, '..', '..', 'README.md'));
    expect(root).toBe(await readmeExample());
  });
});

/** The TypeScript block after `marker` in a README. */
async function blockAfter(path: string, marker: string): Promise<string> {
  const readme = await readFile(path, 'utf8');
  const at = readme.indexOf(marker);
  const block = at === -1 ? undefined : /```ts\n([\s\S]*?)```/.exec(readme.slice(at))?.[1];
  if (block === undefined) throw new Error('the README has no such block');
  return block;
}

/** What the two-user examples leave behind, printed by lines appended to them. */
const CHECKS = `
const seen = (await memory.list({ userId: 'alice' })).map((m) => m.content);
const bobs = (await memory.search('allergies', { userId: 'bob' })).map((m) => m.content);
console.log(JSON.stringify({ seen, bobs, all: (await memory.list({ kinds: ['fact', 'event'] })).length }));
await memory.close();
`;

describe('the two-user examples', () => {
  for (const [name, path, marker] of [
    ['the package README', join(packageDir, 'README.md'), '## One agent, many users'],
    ['the repository README', join(packageDir, '..', '..', 'README.md'), '**One agent, many users.**'],
  ] as const) {
    it(`in ${name}: under 15 lines, and Bob's calls never reach Alice's memory`, async () => {
      const example = await blockAfter(path, marker);
      expect(example.trim().split('\n').length).toBeLessThan(15);
      const cwd = await mkdtemp(join(dir, 'users-'));
      const script = join(cwd, 'example.mjs');
      const imports = example.includes('import ') ? '' : "import { createMemory } from '@engram/memory';\n";
      const closeBob = example.includes('const bob =') ? 'await bob.close();\n' : '';
      await writeFile(script, `${imports}${example}${CHECKS}${closeBob}`);
      const run = await runNode(script, [], { cwd });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as { seen: string[]; bobs: string[]; all: number };
      expect(out.seen).toContain('I am allergic to peanuts');
      expect(out.bobs).not.toContain('I am allergic to peanuts');
      // Bob's memories and messages are gone; Alice's (and the agent's own) stay.
      expect(out.all).toBe(name === 'the package README' ? 2 : 1);
    }, 180_000);
  }
});

describe('the default embedder', () => {
  it('finds a memory by meaning as soon as add resolves, among unrelated ones', async () => {
    const memory = await createMemory({ path: join(dir, 'use.db') });
    try {
      await memory.add('My daughter is allergic to peanuts.');
      await memory.add('The quarterly report is due on the first Monday of April.');
      await memory.add('Our office plants need water twice a week.');
      const [best] = await memory.search('what food should the kid avoid?');
      expect(best?.content).toBe('My daughter is allergic to peanuts.');
      expect(best?.explanation.arms).toContain('vector');
    } finally {
      await memory.close();
    }
  });
});
