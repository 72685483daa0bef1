#!/usr/bin/env node
import { DATASET_NAMES } from '../datasets/common.js';
import { isDatasetName, loadDataset } from '../datasets/load.js';
import { parseFixture } from '../fixture.js';
import { runFixture } from '../runner.js';
import {
  finishReport,
  parseCliArgs,
  progressPrinter,
  resolveUserPath,
  runCli,
  writeJsonFile,
} from './common.js';

const USAGE = `usage: eval:dataset <${DATASET_NAMES.join('|')}> <path-to-data-file> <report.json> [--no-concepts] [--fixture-out <file>]

Turns a public dataset into a retrieval fixture (see the package README for each adapter), runs it through
the real store and retriever (FTS-only, vector-only, hybrid), prints a table and writes the JSON report.
  locomo   locomo10.json        scifact  scifact.zip        cmrc  cmrc2018_dev.json
  --no-concepts          embed without the synonym concepts
  --fixture-out <file>   also write the generated fixture (to run it again with eval:fixture)`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(argv, { boolean: ['help', 'no-concepts'], valued: ['fixture-out'] }, USAGE);
  if (!args.ok) return args.exitCode;
  const [name, dataArg, reportArg, ...rest] = args.positionals;
  if (name === undefined || dataArg === undefined || reportArg === undefined || rest.length > 0) {
    process.stderr.write(`expected a dataset name and two paths\n${USAGE}\n`);
    return 2;
  }
  if (!isDatasetName(name)) {
    process.stderr.write(
      `unknown dataset ${JSON.stringify(name)}; expected one of ${DATASET_NAMES.join(', ')}\n`,
    );
    return 2;
  }
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  const started = performance.now();
  log(`reading ${name} from ${resolveUserPath(dataArg)}`);
  const { fixture: built, stats } = await loadDataset(name, resolveUserPath(dataArg));
  const fixture = parseFixture(built);
  log(
    `${fixture.name}: ${Object.entries(stats)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  const fixtureOut = args.flags.get('fixture-out');
  if (typeof fixtureOut === 'string') writeJsonFile(resolveUserPath(fixtureOut), fixture);
  const report = await runFixture({
    fixture,
    conceptFeatures: !args.flags.has('no-concepts'),
    onProgress: progressPrinter(log, 250),
  });
  finishReport(report, resolveUserPath(reportArg), started);
  return 0;
}

runCli('eval:dataset', main);
