import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckScopeInput, ScopeFile, ScopePackage } from './check-scope.js';
import { MANIFEST_FILE } from './manifest.js';

const WORKSPACE_ROOTS = ['packages', 'apps'];
const SOURCE_FILE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist']);

/** Where reading the repository failed, without any file content. */
export type ReadRepositoryResult =
  | { readonly ok: true; readonly input: CheckScopeInput }
  | { readonly ok: false; readonly message: string };

function walk(root: string, dir: string, out: string[]): void {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    // Symlinks are neither files nor directories for Dirent, so linked trees are not followed.
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(root, path, out);
    } else if (entry.isFile() && SOURCE_FILE.test(entry.name)) {
      out.push(path);
    }
  }
}

function isRegularFile(absolute: string): boolean {
  try {
    return statSync(absolute).isFile();
  } catch {
    return false;
  }
}

/** Paths the manifest mentions, read leniently (the checker validates the manifest itself). */
function listedPaths(manifest: unknown): string[] {
  if (typeof manifest !== 'object' || manifest === null) return [];
  const paths: string[] = [];
  for (const key of ['tests', 'exemptions']) {
    const list = (manifest as Record<string, unknown>)[key];
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const path = (item as { path?: unknown } | null)?.path;
      if (
        typeof path === 'string' &&
        path !== '' &&
        !path.startsWith('/') &&
        !path.split('/').includes('..')
      ) {
        paths.push(path);
      }
    }
  }
  return paths;
}

/** Reads the manifest, the workspace packages and their source and test files from a repository root. */
export function readRepository(root: string): ReadRepositoryResult {
  const manifestFile = join(root, MANIFEST_FILE);
  if (!existsSync(manifestFile)) return { ok: false, message: `${MANIFEST_FILE} not found in ${root}` };
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch {
    return { ok: false, message: `${MANIFEST_FILE} is not valid JSON` };
  }

  const packages: ScopePackage[] = [];
  const paths: string[] = [];
  for (const workspaceRoot of WORKSPACE_ROOTS) {
    if (!existsSync(join(root, workspaceRoot))) continue;
    for (const entry of readdirSync(join(root, workspaceRoot), { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const dir = `${workspaceRoot}/${entry.name}`;
      const packageJson = join(root, dir, 'package.json');
      if (existsSync(packageJson)) {
        try {
          const { name } = JSON.parse(readFileSync(packageJson, 'utf8')) as { name?: unknown };
          if (typeof name === 'string' && name !== '') packages.push({ name, dir });
        } catch {
          return { ok: false, message: `${dir}/package.json is not valid JSON` };
        }
      }
      walk(root, dir, paths);
    }
  }

  const known = new Set(paths);
  for (const path of listedPaths(manifest)) {
    if (!known.has(path) && isRegularFile(join(root, path))) {
      known.add(path);
      paths.push(path);
    }
  }
  const files: ScopeFile[] = paths
    .sort()
    .map((path) => ({ path, content: readFileSync(join(root, path), 'utf8') }));
  return { ok: true, input: { manifest, files, packages } };
}
