import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
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

/** The endpoint an example is pointed at by {@link runExampleOnEndpoint}: its chat model and API key. */
export const EXAMPLE_ENDPOINT = { chatModel: 'loopback-chat', apiKey: 'sk-loopback' } as const;

/**
 * Runs one of the repository's examples (`examples/<dir>/<file>`) in place, with the dependencies it declares,
 * against the OpenAI-compatible endpoint at `baseUrl` (model and key: {@link EXAMPLE_ENDPOINT}) and a fresh
 * database file in a temporary directory; `check` sees the run and that file before the directory is removed.
 */
export async function runExampleOnEndpoint(
  example: string,
  baseUrl: string,
  check: (run: ChildRun, database: string) => Promise<void>,
): Promise<void> {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const script = join(root, 'examples', example);
  const dir = await mkdtemp(join(tmpdir(), 'engram-example-endpoint-'));
  try {
    const database = join(dir, 'memory.db');
    const run = await runNode(script, [database], {
      cwd: dirname(script),
      env: {
        ...process.env,
        ENGRAM_OPENAI_BASE_URL: baseUrl,
        ENGRAM_OPENAI_CHAT_MODEL: EXAMPLE_ENDPOINT.chatModel,
        ENGRAM_OPENAI_API_KEY: EXAMPLE_ENDPOINT.apiKey,
      },
    });
    await check(run, database);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The first TypeScript block (```ts) of a Markdown file that follows the first line containing `after` (the
 * file's first block when `after` is omitted), without its fence; '' when there is none.
 */
export async function readmeSnippet(file: string, after?: string): Promise<string> {
  const text = await readFile(file, 'utf8');
  const from = after === undefined ? 0 : text.indexOf(after);
  if (from < 0) return '';
  return /```ts\n([\s\S]*?)```/.exec(text.slice(from))?.[1] ?? '';
}

/**
 * Runs a README's TypeScript snippet as a user runs it: its types stripped (TypeScript's own transpiler), `before`
 * and `after` lines put around it (what the README leaves to the reader, such as the model), as an ES module in a
 * temporary directory inside `packageDir` that is also its working directory (so the built packages resolve by
 * name and relative paths land there). The directory is removed afterwards.
 */
export async function runReadmeSnippet(
  packageDir: string,
  snippet: string,
  around: { readonly before?: string; readonly after?: string } = {},
): Promise<ChildRun> {
  const code = [around.before ?? '', snippet, around.after ?? ''].join('\n');
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const dir = await mkdtemp(join(packageDir, '.readme-'));
  try {
    const script = join(dir, 'snippet.mjs');
    await writeFile(script, js);
    const env = { ...process.env };
    delete env.ENGRAM_OPENAI_BASE_URL;
    return await runNode(script, [], { cwd: dir, env });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
