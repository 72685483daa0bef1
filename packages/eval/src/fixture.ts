import type { MemoryKind } from '@engram/store';
import { z } from 'zod';
import { EngramEvalError } from './errors.js';

/** The six subsets of `retrieval-v1`, used whenever a fixture does not declare its own. */
export const RETRIEVAL_SUBSETS: readonly ['exact', 'cjk', 'path', 'code', 'semantic', 'mixed'] = [
  'exact',
  'cjk',
  'path',
  'code',
  'semantic',
  'mixed',
] as const;

/** One of the six standard subsets. */
export type RetrievalSubset = (typeof RETRIEVAL_SUBSETS)[number];

/** Kinds a fixture row may have: the recallable kinds (`persona` and `skill` are never returned by search). */
export const FIXTURE_KINDS: readonly ['event', 'fact', 'semantic', 'episodic', 'reflection'] = [
  'event',
  'fact',
  'semantic',
  'episodic',
  'reflection',
] as const satisfies readonly MemoryKind[];

/** The vector space a fixture is meant for (no vectors are stored in a fixture; the runner embeds). */
export interface FixtureVectorProfile {
  readonly id: string;
  readonly dimensions: number;
  readonly normalized: boolean;
}

/** One corpus row of a fixture. */
export interface FixtureMemory {
  readonly id: string;
  readonly agentId: string;
  readonly kind: (typeof FIXTURE_KINDS)[number];
  readonly content: string;
  readonly importance: number;
  /** Epoch milliseconds; the runner's fixed clock is used when absent. */
  readonly createdAt?: number;
  /** The conversation (session) the row was logged in; stored as the memory's `sessionId`. */
  readonly sessionId?: string;
  /** The row's position in its session (an integer ≥ 1; needs `sessionId`); stored as `seqFrom` = `seqTo`. */
  readonly seq?: number;
}

/** One query of a fixture: its relevant ids belong to the same agent. */
export interface FixtureQuery {
  readonly id: string;
  readonly agentId: string;
  readonly text: string;
  readonly subsets: readonly string[];
  readonly relevantIds: readonly string[];
  /** When the question is asked (epoch ms), for time-aware retrieval; the runner's clock when absent. */
  readonly referenceTime?: number;
}

/**
 * A retrieval fixture. `subsets`, when present, declares the subset names its queries may use (external
 * benchmarks such as LoCoMo categories); when absent, queries must use {@link RETRIEVAL_SUBSETS}.
 */
export interface RetrievalFixture {
  readonly version: number;
  readonly name: string;
  readonly vectorProfile: FixtureVectorProfile;
  readonly subsets?: readonly string[];
  readonly corpus: readonly FixtureMemory[];
  readonly queries: readonly FixtureQuery[];
}

/** The outcome of {@link validateFixture}: the typed fixture, or every problem found. */
export type FixtureValidation =
  | { readonly ok: true; readonly fixture: RetrievalFixture }
  | { readonly ok: false; readonly issues: readonly string[] };

const nonEmpty = z.string().min(1);

const fixtureSchema = z.strictObject({
  version: z.number().int().positive(),
  name: nonEmpty,
  vectorProfile: z.strictObject({
    id: nonEmpty,
    dimensions: z.number().int().positive(),
    normalized: z.boolean(),
  }),
  subsets: z.array(nonEmpty).min(1).optional(),
  corpus: z.array(
    z.strictObject({
      id: nonEmpty,
      agentId: nonEmpty,
      kind: z.enum(FIXTURE_KINDS),
      content: z.string().refine((s) => s.trim().length > 0, 'content must not be blank'),
      importance: z.number().min(0).max(1),
      createdAt: z.number().int().nonnegative().optional(),
      sessionId: nonEmpty.optional(),
      seq: z.number().int().positive().optional(),
    }),
  ),
  queries: z.array(
    z.strictObject({
      id: nonEmpty,
      agentId: nonEmpty,
      text: z.string().refine((s) => s.trim().length > 0, 'text must not be blank'),
      subsets: z.array(nonEmpty).min(1),
      relevantIds: z.array(nonEmpty).min(1, 'a query needs at least one relevant id'),
      referenceTime: z.number().int().nonnegative().optional(),
    }),
  ),
});

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
}

/**
 * Validates a parsed JSON value as a fixture and checks its cross-references: unique corpus ids, unique
 * query ids, relevant ids that exist and belong to the query's agent, known subset names, at least one
 * relevant id per query, a `seq` only with a `sessionId`. Never throws; issue texts name paths and ids, never content.
 */
export function validateFixture(value: unknown): FixtureValidation {
  const parsed = fixtureSchema.safeParse(value);
  if (!parsed.success) {
    // Zod messages here describe types and bounds only (no input values are echoed).
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => `fixture${formatPath(issue.path)}: ${issue.message}`),
    };
  }
  const fixture = parsed.data;
  const issues: string[] = [];

  const owner = new Map<string, string>();
  fixture.corpus.forEach((row, index) => {
    if (owner.has(row.id)) issues.push(`corpus[${index}]: duplicate corpus id ${JSON.stringify(row.id)}`);
    else owner.set(row.id, row.agentId);
    if (row.seq !== undefined && row.sessionId === undefined)
      issues.push(`corpus[${index}]: seq needs a sessionId`);
  });

  const declared = fixture.subsets ?? RETRIEVAL_SUBSETS;
  if (new Set(declared).size !== declared.length) issues.push('subsets: duplicate subset name');
  const allowedSubsets = new Set<string>(declared);

  const queryIds = new Set<string>();
  fixture.queries.forEach((query, index) => {
    const where = `queries[${index}]`;
    if (queryIds.has(query.id)) issues.push(`${where}: duplicate query id ${JSON.stringify(query.id)}`);
    queryIds.add(query.id);
    for (const subset of query.subsets) {
      if (!allowedSubsets.has(subset)) issues.push(`${where}: unknown subset ${JSON.stringify(subset)}`);
    }
    if (new Set(query.subsets).size !== query.subsets.length) issues.push(`${where}: duplicate subset`);
    const seen = new Set<string>();
    for (const id of query.relevantIds) {
      if (seen.has(id)) issues.push(`${where}: duplicate relevant id ${JSON.stringify(id)}`);
      seen.add(id);
      const agent = owner.get(id);
      if (agent === undefined)
        issues.push(`${where}: relevant id ${JSON.stringify(id)} is not in the corpus`);
      else if (agent !== query.agentId) {
        issues.push(`${where}: relevant id ${JSON.stringify(id)} belongs to another agent`);
      }
    }
  });

  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, fixture: fixture as RetrievalFixture };
}

/** Validates like {@link validateFixture} and throws `ENGRAM_EVAL_INVALID_FIXTURE` (with every issue) on failure. */
export function parseFixture(value: unknown): RetrievalFixture {
  const result = validateFixture(value);
  if (result.ok) return result.fixture;
  const shown = result.issues.slice(0, 10).join('; ');
  const more = result.issues.length > 10 ? ` (and ${result.issues.length - 10} more)` : '';
  throw new EngramEvalError('ENGRAM_EVAL_INVALID_FIXTURE', `Invalid fixture: ${shown}${more}`, {
    issues: result.issues,
  });
}

/** The subset names a fixture reports on: its declared list, or the six standard subsets. */
export function fixtureSubsets(fixture: RetrievalFixture): readonly string[] {
  return fixture.subsets ?? RETRIEVAL_SUBSETS;
}
