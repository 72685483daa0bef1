import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { type ChildRun, runNode } from './run-node.js';

/**
 * Runs one of the repository's examples (`examples/<dir>/<file>`) as a user runs it: a Node process importing
 * the built packages by name, from a temporary directory inside `packageDir` (so the package and its
 * dependencies resolve from there), with its scripted model (no `ENGRAM_OPENAI_BASE_URL`) and a fresh
 * database file as its argument. The directory is removed afterwards.
 */
export async function runRepositoryExample(packageDir: string, example: string): Promise<ChildRun> {
  const dir = await mkdtemp(join(packageDir, '.example-'));
  try {
    const script = join(dir, basename(example));
    await copyFile(join(packageDir, '..', '..', 'examples', example), script);
    const env = { ...process.env };
    delete env.ENGRAM_OPENAI_BASE_URL;
    return await runNode(script, [join(dir, 'memory.db')], { cwd: dir, env });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
