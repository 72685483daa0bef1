#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { isEngramEvalError } from '../errors.js';
import { parseFixture } from '../fixture.js';
import { formatReportTable } from '../report.js';
import { runFixture } from '../runner.js';
import { parseArgs, progressPrinter, resolveUserPath, writeJsonFile } from './common.js';

const USAGE = `usage: eval:fixture <fixture.json> <report.json> [--no-concepts] [--store <file>]

Runs a retrieval fixture through the real store and retriever (FTS-only, vector-only, hybrid), prints a
table and writes the JSON report. Paths are relative to the directory you ran pnpm from.
  --no-concepts   embed without the synonym concepts (the ablation)
  --store <file>  use a SQLite file instead of an in-memory database (it must not exist yet)`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv, { boolean: ['help', 'no-concepts'], valued: ['store'] });
  if (!args.ok) {
    process.stderr.write(`${args.message}\n${USAGE}\n`);
    return 2;
  }
  if (args.flags.has('help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [fixtureArg, reportArg, ...rest] = args.positionals;
  if (fixtureArg === undefined || reportArg === undefined || rest.length > 0) {
    process.stderr.write(`expected two paths\n${USAGE}\n`);
    return 2;
  }
  const fixturePath = resolveUserPath(fixtureArg);
  const reportPath = resolveUserPath(reportArg);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(fixturePath, 'utf8')) as unknown;
  } catch (error) {
    process.stderr.write(
      `cannot read the fixture as JSON: ${(error as NodeJS.ErrnoException).code ?? 'invalid JSON'}\n`,
    );
    return 1;
  }
  const fixture = parseFixture(raw);
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  log(
    `fixture ${fixture.name} v${fixture.version}: ${fixture.corpus.length} rows, ${fixture.queries.length} queries`,
  );
  const started = performance.now();
  const store = args.flags.get('store');
  const report = await runFixture({
    fixture,
    conceptFeatures: !args.flags.has('no-concepts'),
    ...(typeof store === 'string' ? { storePath: resolveUserPath(store) } : {}),
    onProgress: progressPrinter(log),
  });
  writeJsonFile(reportPath, report);
  process.stdout.write(`${formatReportTable(report)}\n`);
  log(`report written to ${reportPath} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (isEngramEvalError(error)) {
      process.stderr.write(`${error.code}: ${error.message}\n`);
    } else {
      const code = (error as { code?: unknown }).code;
      process.stderr.write(
        `eval:fixture failed${typeof code === 'string' ? ` (${code})` : ''}: ${(error as Error).name}\n`,
      );
    }
    process.exitCode = 1;
  },
);
