import { describe, expect, it } from 'vitest';
import { mainHelp } from './args-help.js';
import { EngramCliError, isEngramCliError } from './errors.js';
import type { CliIo } from './io.js';
import { describeFailure, main } from './main.js';
import { appVersion } from './version.js';

function capture(): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    cwd: '/nowhere',
    env: {},
    stopSignal: new Promise<void>(() => {}),
  };
  return { io, out: () => out, err: () => err };
}

describe('main (no database is opened for help, version and invalid arguments)', () => {
  it('prints help on stdout and exits 0', async () => {
    const c = capture();
    expect(await main(['--help'], c.io)).toBe(0);
    expect(c.out()).toBe(mainHelp());
    expect(c.err()).toBe('');
  });

  it('prints the version', async () => {
    const c = capture();
    expect(await main(['--version'], c.io)).toBe(0);
    expect(c.out()).toBe(`engram ${appVersion()}\n`);
    expect(appVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('prints a one-line message and a usage hint on stderr and exits 2 for invalid arguments', async () => {
    const c = capture();
    expect(await main(['search', '--limit', 'many', 'x'], c.io)).toBe(2);
    expect(c.out()).toBe('');
    const lines = c.err().trimEnd().split('\n');
    expect(lines[0]).toBe('engram search: --limit must be an integer from 1 to 100');
    expect(lines[1]).toMatch(/^Usage: engram search <query>/);
    expect(lines[2]).toBe("Run 'engram search --help' for details.");
  });
});

describe('describeFailure', () => {
  it('shows the fixed message and code of Engram errors', () => {
    expect(
      describeFailure(new EngramCliError('ENGRAM_CLI_NOT_FOUND', 'no memory with that id for agent a')),
    ).toBe('no memory with that id for agent a (ENGRAM_CLI_NOT_FOUND)');
    const storeLike = Object.assign(new Error('Database is busy.\nsecond line'), {
      name: 'EngramStoreError',
      code: 'ENGRAM_STORE_BUSY',
    });
    expect(describeFailure(storeLike)).toBe('Database is busy. (ENGRAM_STORE_BUSY)');
  });

  it('never prints the message of a foreign error: it may hold content', () => {
    const secret = 'SELECT * FROM memories WHERE content = "my password"';
    expect(describeFailure(new TypeError(secret))).toBe('unexpected error (TypeError)');
    expect(describeFailure(Object.assign(new Error(secret), { code: 'ENOSPC' }))).toBe(
      'unexpected error (ENOSPC)',
    );
    expect(describeFailure(secret)).toBe('unexpected error (Error)');
    expect(describeFailure(null)).toBe('unexpected error (Error)');
  });

  it('recognises its own errors by code and name', () => {
    expect(isEngramCliError(new EngramCliError('ENGRAM_CLI_TOOL_FAILED', 'x'))).toBe(true);
    expect(isEngramCliError({ name: 'EngramCliError', code: 'ENGRAM_CLI_OTHER' })).toBe(false);
    expect(isEngramCliError(new Error('x'))).toBe(false);
  });
});
