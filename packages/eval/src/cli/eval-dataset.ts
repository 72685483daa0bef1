#!/usr/bin/env node
import { DATASET_NAMES, DATASET_SPLITS, isDatasetSplit } from '../datasets/common.js';
import { isDatasetName, loadDataset } from '../datasets/load.js';
import { runInfo } from '../docs/run-info.js';
import { parseFixture } from '../fixture.js';
import { runFixture } from '../runner.js';
import {
  EMBEDDER_FLAGS,
  EMBEDDER_USAGE,
  embedderFromFlags,
  finishReport,
  logEmbedder,
  parseCliArgs,
  progressPrinter,
  RERANK_FLAGS,
  RERANK_USAGE,
  rerankFromFlags,
  resolveUserPath,
  runCli,
  storeOption,
  writeJsonFile,
} from './common.js';

const USAGE = `usage: eval:dataset <${DATASET_NAMES.join('|')}> <path-to-data-file> <report.json> [options]

Turns a public dataset into a retrieval fixture (docs/guides/evaluation.md describes each adapter), runs it through
the real store and retriever (FTS-only, vector-only, hybrid) and the plain BM25 reference, prints a table
and writes the JSON report.
  locomo, locomo-sessions, locomo-long   locomo10.json     scifact  scifact.zip     cmrc  cmrc2018_dev.json
  --split <${DATASET_SPLITS.join('|')}>  dev to tune on, test to report on, all (default) the whole benchmark
  --fixture-out <file>   also write the generated fixture (to run it again with eval:fixture)
  --store <file|url>     use a SQLite file (it must not exist yet) or an empty PostgreSQL database
                         (postgres://…) instead of an in-memory SQLite database
${EMBEDDER_USAGE}
${RERANK_USAGE}`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(
    argv,
    {
      boolean: ['help', ...EMBEDDER_FLAGS.boolean],
      valued: ['fixture-out', 'split', 'store', ...EMBEDDER_FLAGS.valued, ...RERANK_FLAGS.valued],
    },
    USAGE,
  );
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
  const split = args.flags.get('split') ?? 'all';
  if (typeof split !== 'string' || !isDatasetSplit(split)) {
    process.stderr.write(`unknown split; expected one of ${DATASET_SPLITS.join(', ')}\n${USAGE}\n`);
    return 2;
  }
  const rerank = await rerankFromFlags(args.flags);
  if (rerank !== undefined && 'message' in rerank) {
    process.stderr.write(`${rerank.message}\n${USAGE}\n`);
    return 2;
  }
  const chosen = await embedderFromFlags(args.flags);
  if ('message' in chosen) {
    process.stderr.write(`${chosen.message}\n${USAGE}\n`);
    return 2;
  }
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  const started = performance.now();
  const run = runInfo('eval:dataset', argv);
  log(`reading ${name} from ${resolveUserPath(dataArg)} (split ${split})`);
  const { fixture: built, stats } = await loadDataset(name, resolveUserPath(dataArg), { split });
  const fixture = parseFixture(built);
  log(
    `${fixture.name}: ${Object.entries(stats)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  logEmbedder(log, chosen);
  const fixtureOut = args.flags.get('fixture-out');
  if (typeof fixtureOut === 'string') writeJsonFile(resolveUserPath(fixtureOut), fixture);
  const report = await runFixture({
    fixture,
    embedder: { name: chosen.named.name, embedder: chosen.named.embedder },
    ...(chosen.cache === undefined ? {} : { vectorCache: chosen.cache }),
    ...storeOption(args.flags.get('store')),
    ...(rerank === undefined ? {} : { rerank }),
    onProgress: progressPrinter(log, 250),
  });
  finishReport({ ...report, run }, resolveUserPath(reportArg), started);
  // CPU time of the whole process, its worker threads (the `use` embedder's) included.
  const cpu = process.cpuUsage();
  log(`CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s (this process and its worker threads)`);
  return 0;
}

runCli('eval:dataset', main);
