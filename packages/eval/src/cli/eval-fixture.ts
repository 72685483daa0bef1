#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseFixture } from '../fixture.js';
import { runFixture } from '../runner.js';
import { finishReport, parseCliArgs, progressPrinter, resolveUserPath, runCli } from './common.js';

const USAGE = `usage: eval:fixture <fixture.json> <report.json> [--no-concepts] [--store <file>]

Runs a retrieval fixture through the real store and retriever (FTS-only, vector-only, hybrid), prints a
table and writes the JSON report. Paths are relative to the directory you ran pnpm from.
  --no-concepts   embed without the synonym concepts (the ablation)
  --store <file>  use a SQLite file instead of an in-memory database (it must not exist yet)`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(argv, { boolean: ['help', 'no-concepts'], valued: ['store'] }, USAGE);
  if (!args.ok) return args.exitCode;
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
  finishReport(report, reportPath, started);
  return 0;
}

runCli('eval:fixture', main);
