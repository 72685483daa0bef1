/**
 * What of a report the documents show: an evaluation report without its per-query rows, or a benchmark
 * report as it is. Digests are the files under `docs/reports/`; the rendered documents are made from them
 * alone, and a digest read back is checked before any figure of it is used.
 */
import { z } from 'zod';
import { EngramEvalError } from '../errors.js';

/** The run facts a digest keeps (see `RunInfo`). */
export interface RunDigest {
  readonly command: string;
  readonly commit: string | null;
  readonly dirty: boolean;
  readonly date: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly platform: string;
  };
}

/** One line of figures: over the whole set or one subset. */
export interface MetricsDigest {
  readonly queries: number;
  readonly recallAt5: number;
  readonly mrrAt10: number;
  readonly ndcgAt10: number;
}

/** An evaluation report without its per-query rows. */
export interface EvalDigest {
  readonly kind: 'eval';
  readonly fixture: { readonly name: string; readonly version: number };
  readonly embedder: { readonly name: string; readonly id: string; readonly dimensions: number };
  readonly run: RunDigest;
  readonly variants: Readonly<
    Record<
      string,
      { readonly overall: MetricsDigest; readonly subsets: Readonly<Record<string, MetricsDigest>> }
    >
  >;
}

/** A benchmark report, whole, with its run facts beside it. */
export interface BenchDigest {
  readonly kind: 'bench';
  readonly run: RunDigest;
  readonly report: { readonly version: number; readonly size: number; readonly [key: string]: unknown };
}

export type Digest = EvalDigest | BenchDigest;

const runSchema: z.ZodType<RunDigest> = z.object({
  command: z.string().max(1000),
  commit: z.string().max(64).nullable(),
  dirty: z.boolean(),
  date: z.string().max(40),
  machine: z.object({
    cpus: z.number().int().nonnegative(),
    cpuModel: z.string().max(200),
    memoryGiB: z.number().nonnegative(),
    node: z.string().max(40),
    platform: z.string().max(60),
  }),
});

const metricsSchema: z.ZodType<MetricsDigest> = z.object({
  queries: z.number().int().nonnegative(),
  recallAt5: z.number(),
  mrrAt10: z.number(),
  ndcgAt10: z.number(),
});

const variantSchema = z.object({
  overall: metricsSchema,
  subsets: z.record(z.string().max(100), metricsSchema),
});

const evalDigestSchema: z.ZodType<EvalDigest> = z.object({
  kind: z.literal('eval'),
  fixture: z.object({ name: z.string().min(1).max(100), version: z.number().int() }),
  embedder: z.object({ name: z.string().max(100), id: z.string().max(200), dimensions: z.number().int() }),
  run: runSchema,
  variants: z.record(z.string().max(40), variantSchema),
});

const benchDigestSchema: z.ZodType<BenchDigest> = z.object({
  kind: z.literal('bench'),
  run: runSchema,
  // The benchmark report itself: its shape is the benchmark's (see bench/report.ts); figures are numbers.
  report: z.looseObject({ version: z.number().int(), size: z.number().int() }),
});

const digestSchema: z.ZodType<Digest> = z.union([evalDigestSchema, benchDigestSchema]);

function invalid(what: string, issues: readonly string[]): EngramEvalError {
  return new EngramEvalError('ENGRAM_EVAL_INVALID_ARGUMENTS', `${what} is not usable`, { issues });
}

function issuesOf(error: z.ZodError): string[] {
  return error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`);
}

/**
 * The digest of a report written by `pnpm eval:dataset`, `pnpm eval:fixture`, `pnpm bench` or
 * `pnpm bench:postgres`. A report without its run facts (written by an older version) is refused: a figure in
 * the documents always names the command, commit and machine it came from.
 */
export function digestReport(value: unknown): Digest {
  if (typeof value !== 'object' || value === null) throw invalid('the report', ['(root): not an object']);
  const report = value as Record<string, unknown>;
  const run = runSchema.safeParse(report.run);
  if (!run.success) throw invalid('the report', ['run: missing or malformed (re-run it with this version)']);
  if ('variants' in report) {
    const variants: Record<string, unknown> = {};
    const raw = report.variants;
    if (typeof raw === 'object' && raw !== null) {
      for (const [name, v] of Object.entries(raw)) {
        if (typeof v !== 'object' || v === null) continue;
        const { overall, subsets } = v as Record<string, unknown>;
        variants[name] = { overall, subsets };
      }
    }
    const parsed = evalDigestSchema.safeParse({
      kind: 'eval',
      fixture: report.fixture,
      embedder: report.embedder,
      run: run.data,
      variants,
    });
    if (!parsed.success) throw invalid('the evaluation report', issuesOf(parsed.error));
    return parsed.data;
  }
  const { run: _run, ...rest } = report;
  const parsed = benchDigestSchema.safeParse({ kind: 'bench', run: run.data, report: rest });
  if (!parsed.success) throw invalid('the benchmark report', issuesOf(parsed.error));
  return parsed.data;
}

/** A digest file read back: checked, never trusted. */
export function parseDigest(value: unknown, name: string): Digest {
  const parsed = digestSchema.safeParse(value);
  if (!parsed.success) throw invalid(`digest ${name}`, issuesOf(parsed.error));
  return parsed.data;
}

/** The file name a digest is kept under: one per fixture and embedder, one per benchmark command. */
export function digestFileName(digest: Digest): string {
  const slug = (s: string): string =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
  if (digest.kind === 'eval') return `eval-${slug(digest.fixture.name)}-${slug(digest.embedder.name)}.json`;
  // Where the report was written does not tell one run from another.
  const words = digest.run.command.replace(/^pnpm /, '').split(' ');
  const kept = words.filter((w, i) => w !== '--out' && words[i - 1] !== '--out' && !w.startsWith('--out='));
  return `${slug(kept.join(' ')).slice(0, 80)}.json`;
}
