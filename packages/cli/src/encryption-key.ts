/**
 * The encryption key of a database for the CLI: from the file named by `--key-file` (its bytes, one trailing
 * line break dropped) or else from the `ENGRAM_KEY` environment variable. The key never travels in argv, and
 * no message here (or anywhere in the CLI) contains it: errors name the file's problem, never its content.
 */
import { readFile } from 'node:fs/promises';
import { EngramCliError } from './errors.js';

/** Environment variable holding the key when no `--key-file` is given. */
export const KEY_ENV = 'ENGRAM_KEY';

/** Largest key file read (a passphrase or raw key bytes; anything bigger is a wrong file). */
const MAX_KEY_FILE_BYTES = 4096;

/** Reads the key, or resolves undefined when neither `--key-file` nor `ENGRAM_KEY` gives one. */
export async function loadEncryptionKey(
  keyFile: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Uint8Array | string | undefined> {
  if (keyFile === undefined) {
    const fromEnv = env[KEY_ENV];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(keyFile);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new EngramCliError(
      'ENGRAM_CLI_FILE_UNREADABLE',
      `cannot read the key file${typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? ` (${code})` : ''}`,
    );
  }
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0a) end -= 1;
  if (end > 0 && bytes[end - 1] === 0x0d) end -= 1;
  if (end === 0) throw new EngramCliError('ENGRAM_CLI_INVALID_ARGUMENTS', 'the key file is empty');
  if (end > MAX_KEY_FILE_BYTES) {
    throw new EngramCliError(
      'ENGRAM_CLI_INVALID_ARGUMENTS',
      `the key file is larger than ${MAX_KEY_FILE_BYTES} bytes`,
    );
  }
  return new Uint8Array(bytes.subarray(0, end));
}
