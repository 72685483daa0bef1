import { describe, expect, it } from 'vitest';
import { runNode } from './run-node.js';

describe('runNode', () => {
  it('collects stdout, stderr and the exit code of a Node child, with the environment it was given', async () => {
    const script = '-e';
    const run = await runNode(
      script,
      ['process.stdout.write(process.env.X ?? "none"); process.stderr.write("err"); process.exit(3)'],
      { env: { X: 'given' } },
    );
    expect(run).toEqual({ code: 3, stdout: 'given', stderr: 'err' });
  });
});
