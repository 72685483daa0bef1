import type { RunInfo } from './docs/run-info.js';
import type { FixtureVectorProfile } from './fixture.js';
import type { QueryScores } from './metrics.js';

/** Version of the report shape below; bumped on any change other tools would notice (2: embedder, vectors, bm25). */
export const REPORT_VERSION = 2;

/** The three ways the runner drives the production retriever. */
export const RETRIEVER_VARIANTS: readonly ['fts', 'vector', 'hybrid'] = ['fts', 'vector', 'hybrid'] as const;
/** One of the production retriever's variants. */
export type RetrieverVariantName = (typeof RETRIEVER_VARIANTS)[number];
/** Every variant of a report: the production retriever's three and the plain BM25 reference. */
export const VARIANTS: readonly ['fts', 'vector', 'hybrid', 'bm25'] = [
  'fts',
  'vector',
  'hybrid',
  'bm25',
] as const;
/** One variant name. */
export type VariantName = (typeof VARIANTS)[number];

/** Mean figures over a group of queries. */
export interface MetricSummary {
  readonly queries: number;
  readonly recallAt5: number;
  readonly mrrAt10: number;
  readonly ndcgAt10: number;
}

/** One query's ranking (ids, best first, at most 10) and its figures. */
export interface QueryReport extends QueryScores {
  readonly id: string;
  readonly ranked: readonly string[];
}

/** The figures of one variant: overall, per subset, per query. */
export interface VariantReport {
  readonly overall: MetricSummary;
  readonly subsets: Readonly<Record<string, MetricSummary>>;
  readonly queries: readonly QueryReport[];
}

/** The embedder a run used: its `--embedder` name (`custom` for one passed in code) and profile. */
export interface ReportEmbedder {
  readonly name: string;
  readonly id: string;
  readonly dimensions: number;
}

/** Where a run's vectors came from (distinct texts by content hash, corpus and queries). */
export interface ReportVectors {
  readonly embedded: number;
  readonly fromCache: number;
}

/** The evaluation report (`test-results/eval/retrieval-v1.json` and the CLIs' output). */
export interface RetrievalReport {
  readonly version: number;
  readonly fixture: { readonly name: string; readonly version: number };
  /** The profile the fixture declares. */
  readonly vectorProfile: FixtureVectorProfile;
  /** The embedder the run used (absent in reports of version 1). */
  readonly embedder?: ReportEmbedder;
  readonly vectors?: ReportVectors;
  /** The reranker of the run's retriever variants, when it had one (`--rerank`; `bm25` is never reranked). */
  readonly rerank?: { readonly name: string; readonly id?: string };
  /** The production retriever's three variants and the `bm25` reference (new in version 2). */
  readonly variants: Readonly<Record<VariantName, VariantReport>>;
  /** The command, commit, date and machine of the run (absent in reports written before it was kept). */
  readonly run?: RunInfo;
}

/** A scored query together with the subsets it belongs to (input of {@link summarizeVariant}). */
export interface ScoredQuery extends QueryReport {
  readonly subsets: readonly string[];
}

/** Arithmetic mean of each figure; zero queries give zeros. */
export function meanScores(scores: readonly QueryScores[]): MetricSummary {
  if (scores.length === 0) return { queries: 0, recallAt5: 0, mrrAt10: 0, ndcgAt10: 0 };
  let recall = 0;
  let mrr = 0;
  let ndcg = 0;
  for (const s of scores) {
    recall += s.recallAt5;
    mrr += s.mrrAt10;
    ndcg += s.ndcgAt10;
  }
  const n = scores.length;
  return { queries: n, recallAt5: recall / n, mrrAt10: mrr / n, ndcgAt10: ndcg / n };
}

/**
 * Builds a variant's report: the overall mean, the mean of each subset that has queries (in the order
 * `subsetOrder` gives, then any others by name), and the per-query rows in input order.
 */
export function summarizeVariant(
  scored: readonly ScoredQuery[],
  subsetOrder: readonly string[],
): VariantReport {
  const bySubset = new Map<string, QueryScores[]>();
  for (const q of scored) {
    for (const subset of q.subsets) {
      const list = bySubset.get(subset);
      if (list === undefined) bySubset.set(subset, [q]);
      else list.push(q);
    }
  }
  const names = [
    ...subsetOrder.filter((s) => bySubset.has(s)),
    ...[...bySubset.keys()].filter((s) => !subsetOrder.includes(s)).sort(),
  ];
  const subsets: Record<string, MetricSummary> = {};
  for (const name of names) subsets[name] = meanScores(bySubset.get(name) ?? []);
  return {
    overall: meanScores(scored),
    subsets,
    queries: scored.map(({ id, ranked, recallAt5, mrrAt10, ndcgAt10 }) => ({
      id,
      ranked,
      recallAt5,
      mrrAt10,
      ndcgAt10,
    })),
  };
}

function fmt(value: number): string {
  return value.toFixed(3);
}

/** Renders a report as a plain-text table: variant × (overall, subsets) × R@5 / MRR@10 / nDCG@10. */
export function formatReportTable(report: RetrievalReport): string {
  const header = ['variant', 'scope', 'queries', 'R@5', 'MRR@10', 'nDCG@10'];
  const rows: string[][] = [];
  for (const variant of VARIANTS) {
    // A version-1 report has no bm25 variant.
    const v = report.variants[variant] as VariantReport | undefined;
    if (v === undefined) continue;
    const scopes: [string, MetricSummary][] = [['overall', v.overall], ...Object.entries(v.subsets)];
    for (const [scope, m] of scopes) {
      rows.push([variant, scope, String(m.queries), fmt(m.recallAt5), fmt(m.mrrAt10), fmt(m.ndcgAt10)]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const profile = report.embedder ?? report.vectorProfile;
  const title = `${report.fixture.name} v${report.fixture.version} (${profile.id}, ${profile.dimensions}d)`;
  const footer = [
    ...(report.vectors === undefined
      ? []
      : [`vectors: ${report.vectors.embedded} embedded, ${report.vectors.fromCache} from the cache`]),
    ...(report.rerank === undefined
      ? []
      : [
          `reranked by ${report.rerank.name}${report.rerank.id === undefined ? '' : ` (${report.rerank.id})`}`,
        ]),
  ];
  return [title, line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), ...footer].join(
    '\n',
  );
}
