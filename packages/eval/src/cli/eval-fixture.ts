#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
} from './common.js';

const BUNDLED_FIXTURE = fileURLToPath(new URL('../../fixtures/retrieval-v1.json', import.meta.url));

const USAGE = `usage: eval:fixture <fixture.json> <report.json> [options]
       eval:fixture [--fixture <fixture.json>] [--out <report.json>] [options]

Runs a retrieval fixture through the real store and retriever (FTS-only, vector-only, hybrid) and the plain
BM25 reference, prints a table and writes the JSON report, with figures per subset the fixture declares.
Paths are relative to the directory you ran pnpm from.
  --fixture <file>       the fixture (default the bundled retrieval-v1)
  --out <file>           the report (default test-results/eval/<fixture name>-<embedder>.json)
  --store <file|url>     use a SQLite file (it must not exist yet) or an empty PostgreSQL database
                         (postgres://…) instead of an in-memory SQLite database
${EMBEDDER_USAGE}
${RERANK_USAGE}`;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(
    argv,
    {
      boolean: ['help', ...EMBEDDER_FLAGS.boolean],
      valued: ['store', 'fixture', 'out', ...EMBEDDER_FLAGS.valued, ...RERANK_FLAGS.valued],
    },
    USAGE,
  );
  if (!args.ok) return args.exitCode;
  const { positionals, flags } = args;
  const fixtureFlag = flags.get('fixture');
  const outFlag = flags.get('out');
  if (
    positionals.length !== 0 &&
    (positionals.length !== 2 || fixtureFlag !== undefined || outFlag !== undefined)
  ) {
    process.stderr.write(`expected two paths\n${USAGE}\n`);
    return 2;
  }
  const rerank = await rerankFromFlags(args.flags);
  if (rerank !== undefined && 'message' in rerank) {
    process.stderr.write(`${rerank.message}\n${USAGE}\n`);
    return 2;
  }
  const chosen = await embedderFromFlags(flags);
  if ('message' in chosen) {
    process.stderr.write(`${chosen.message}\n${USAGE}\n`);
    return 2;
  }
  const fixturePath =
    positionals[0] !== undefined
      ? resolveUserPath(positionals[0])
      : typeof fixtureFlag === 'string'
        ? resolveUserPath(fixtureFlag)
        : BUNDLED_FIXTURE;
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
  const reportPath =
    positionals[1] !== undefined
      ? resolveUserPath(positionals[1])
      : typeof outFlag === 'string'
        ? resolveUserPath(outFlag)
        : resolveUserPath(`test-results/eval/${fixture.name}-${chosen.named.name}.json`);
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  log(
    `fixture ${fixture.name} v${fixture.version}: ${fixture.corpus.length} rows, ${fixture.queries.length} queries`,
  );
  logEmbedder(log, chosen);
  const started = performance.now();
  const run = runInfo('eval:fixture', argv);
  const store = flags.get('store');
  const report = await runFixture({
    fixture,
    embedder: { name: chosen.named.name, embedder: chosen.named.embedder },
    ...(chosen.cache === undefined ? {} : { vectorCache: chosen.cache }),
    ...storeOption(store),
    ...(rerank === undefined ? {} : { rerank }),
    onProgress: progressPrinter(log),
  });
  finishReport({ ...report, run }, reportPath, started);
  return 0;
}

runCli('eval:fixture', main);
