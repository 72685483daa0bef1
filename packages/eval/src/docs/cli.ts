#!/usr/bin/env node
import { parseCliArgs, resolveUserPath, runCli } from '../cli/common.js';
import { findRepoRoot, recordReports, staleDocuments, writeDocuments } from './figures.js';

const USAGE = `usage: docs:figures record <report.json>… | render | check

Keeps the figures of docs/retrieval-quality.md and docs/benchmarks.md:
  record <report.json>…  digest reports written by eval:dataset, eval:fixture, bench or bench:postgres into
                         docs/reports/ (one per fixture and embedder, one per benchmark command), then render
  render                 write both documents from docs/reports/
  check                  exit 1 when a document differs from what docs/reports/ renders`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(argv, { boolean: ['help'], valued: [] }, USAGE);
  if (!args.ok) return args.exitCode;
  const [verb, ...rest] = args.positionals;
  const root = findRepoRoot(resolveUserPath('.'));
  if (verb === 'record' && rest.length > 0) {
    for (const name of recordReports(
      root,
      rest.map((p) => resolveUserPath(p)),
    )) {
      process.stderr.write(`recorded docs/reports/${name}\n`);
    }
    for (const path of writeDocuments(root)) process.stderr.write(`rendered ${path}\n`);
    return 0;
  }
  if (verb === 'render' && rest.length === 0) {
    for (const path of writeDocuments(root)) process.stderr.write(`rendered ${path}\n`);
    return 0;
  }
  if (verb === 'check' && rest.length === 0) {
    const stale = staleDocuments(root);
    for (const path of stale) {
      process.stderr.write(`${path} differs from what docs/reports/ renders: run pnpm docs:figures render\n`);
    }
    return stale.length === 0 ? 0 : 1;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

runCli('docs:figures', main, { showErrorMessages: true });
