/**
 * The figures of the documents: digests kept in `docs/reports/`, the two documents rendered from them, and
 * the check that the documents in the repository are what the digests render.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { EngramEvalError } from '../errors.js';
import {
  type BenchDigest,
  type Digest,
  digestFileName,
  digestReport,
  type EvalDigest,
  parseDigest,
} from './digest.js';
import { HEADLINE_MARKERS, renderBenchmarks, renderHeadline, renderRetrievalQuality } from './render.js';

/** Where the digests live, relative to the repository root. */
export const REPORTS_DIR = 'docs/reports';
/** The rendered documents, relative to the repository root. */
export const RENDERED = {
  quality: 'docs/retrieval-quality.md',
  benchmarks: 'docs/benchmarks.md',
} as const;
/** The file whose figures block (between `HEADLINE_MARKERS`) is rendered too. */
export const README_PATH = 'README.md';

/** `text` with its figures block replaced by `block`; unchanged when it has no block. */
export function withHeadline(text: string, block: string): string {
  const start = text.indexOf(HEADLINE_MARKERS.start);
  const end = text.indexOf(HEADLINE_MARKERS.end);
  if (start === -1 || end < start) return text;
  return `${text.slice(0, start)}${block}${text.slice(end + HEADLINE_MARKERS.end.length)}`;
}

/** The repository root: the nearest folder at or above `from` holding `pnpm-workspace.yaml`. */
export function findRepoRoot(from: string): string {
  let dir = resolve(from);
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new EngramEvalError('ENGRAM_EVAL_INVALID_ARGUMENTS', 'not inside the Engram repository');
    }
    dir = parent;
  }
}

/** Every digest under `docs/reports/`, checked, in file-name order. */
export function loadDigests(root: string): Digest[] {
  const dir = join(root, REPORTS_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(join(dir, f), 'utf8'));
      } catch {
        throw new EngramEvalError('ENGRAM_EVAL_INVALID_ARGUMENTS', `digest ${f} is not JSON`);
      }
      return parseDigest(value, f);
    });
}

/**
 * The two documents as the digests render them, keyed by path relative to the root, and the README with its
 * figures block rendered (when `readme`, the README as it is, is given).
 */
export function renderDocuments(digests: readonly Digest[], readme?: string): Record<string, string> {
  const evals = digests.filter((d): d is EvalDigest => d.kind === 'eval');
  const benches = digests.filter((d): d is BenchDigest => d.kind === 'bench');
  return {
    [RENDERED.quality]: renderRetrievalQuality(evals),
    [RENDERED.benchmarks]: renderBenchmarks(benches),
    ...(readme === undefined ? {} : { [README_PATH]: withHeadline(readme, renderHeadline(evals, benches)) }),
  };
}

function readmeOf(root: string): string | undefined {
  const path = join(root, README_PATH);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/**
 * Keeps the digest of each report file under `docs/reports/` (a later run of the same fixture and embedder,
 * or of the same benchmark command, replaces the earlier one) and returns the digests' file names.
 */
export function recordReports(root: string, reportPaths: readonly string[]): string[] {
  const dir = join(root, REPORTS_DIR);
  mkdirSync(dir, { recursive: true });
  return reportPaths.map((path) => {
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      throw new EngramEvalError('ENGRAM_EVAL_INVALID_ARGUMENTS', 'a report file is missing or not JSON');
    }
    let digest: Digest;
    try {
      digest = digestReport(value);
    } catch (error) {
      if (!(error instanceof EngramEvalError)) throw error;
      throw new EngramEvalError(
        error.code,
        `${basename(path)}: ${error.message} (${error.issues.join('; ')})`,
        { issues: error.issues },
      );
    }
    const name = digestFileName(digest);
    writeFileSync(join(dir, name), `${JSON.stringify(digest, null, 2)}\n`);
    return name;
  });
}

/** Writes the rendered documents; returns their paths. */
export function writeDocuments(root: string): string[] {
  const docs = renderDocuments(loadDigests(root), readmeOf(root));
  for (const [path, content] of Object.entries(docs)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return Object.keys(docs);
}

/** The rendered documents that differ from what the digests render (empty when all match). */
export function staleDocuments(root: string): string[] {
  const docs = renderDocuments(loadDigests(root), readmeOf(root));
  return Object.entries(docs)
    .filter(([path, content]) => {
      const full = join(root, path);
      return !existsSync(full) || readFileSync(full, 'utf8') !== content;
    })
    .map(([path]) => path);
}
