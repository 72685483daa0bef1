import {
  contentHash,
  type ExtractionDecision,
  type ExtractionOutcome,
  type ExtractionReport,
  MAX_TAGS,
  type MaintenanceObserver,
  noopMaintenanceObserver,
} from '@engram/contracts';
import { engramErrorCode } from '@engram/contracts/errors';
import type { MemoryKind, MemoryPatch, MemoryRecord, NewMemory } from '@engram/store';
import { MAX_METADATA_CHARS } from '@engram/store';
import { type Clock, systemClock } from './clock.js';
import { checkIdArgument, isEngramMaintenanceError, isRevisionConflict } from './errors.js';
import type { ExtractionQueue } from './extraction-queue.js';
import { callModel } from './model-call.js';
import {
  type CheckedDecision,
  candidatesOutputSchema,
  checkDecision,
  decisionOutputSchema,
  MODEL_OUTPUT_SCHEMA_NAMES,
} from './model-output.js';
import type { ModelMessage, ModelPort } from './ports.js';
import { safeNotify } from './safe-observer.js';
import { type DecisionRetriever, type ExtractionStore, trustedNeighbours } from './store-ports.js';
import {
  checkChunkMetadata,
  checkChunkTags,
  checkUserId,
  groupFilter,
  inGroup,
  userField,
  writeScope,
} from './user-scope.js';

/** One turn of a conversation chunk. */
export interface ExtractionTurn {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
}

/** A chunk of a session's turns to extract memories from. */
export interface ExtractionChunk {
  readonly agentId: string;
  readonly sessionId?: string;
  readonly turns: readonly ExtractionTurn[];
  /** Provenance of the chunk in the session's event log, when known. */
  readonly seqFrom?: number;
  readonly seqTo?: number;
  /**
   * The user the conversation is with. The rows extraction writes are that user's, and only that user's rows
   * are shown to the model and acted on (updated, superseded, challenged); a chunk without a user writes and
   * acts on the agent's own rows (no user) only. Never another user's memory either way.
   */
  readonly userId?: string;
  /** Metadata every row extraction writes carries (a plain JSON object, the store's size and depth limits). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /**
   * Tags every row extraction writes carries besides `source:extraction` (`prefix:value`, at most
   * `MAX_CHUNK_TAGS` distinct; the `challenges:` prefix is extraction's own and refused).
   */
  readonly tags?: readonly string[];
}

/** A chunk with its user scope checked: the user (null: the agent's own), tags and metadata to write. */
interface ScopedChunk extends ExtractionChunk {
  readonly user: string | null;
  readonly extraTags: readonly string[];
  readonly extraMetadata: Readonly<Record<string, unknown>> | null;
}

/** Construction of an extractor. */
export interface ExtractorConfig {
  readonly store: ExtractionStore;
  readonly retriever: DecisionRetriever;
  /** Without a model every chunk is recorded as `skipped`; nothing is faked. */
  readonly model?: ModelPort | null;
  readonly observer?: MaintenanceObserver;
  readonly clock?: Clock;
  /** When given, chunks run through this process-wide queue (one chunk of a session at a time). */
  readonly queue?: ExtractionQueue;
  /** Neighbours shown to the model per candidate (default 5). */
  readonly neighbours?: number;
  /** Most characters of turns sent to the model; the oldest turns are cut first (default 24,000). */
  readonly maxInputChars?: number;
  readonly maxOutputTokens?: number;
}

/** One applied decision. */
export interface AppliedDecision {
  readonly decision: ExtractionDecision;
  /** The row written or changed (the new row for ADD, SUPERSEDE, and the challenger of CHALLENGE); null for NOOP. */
  readonly id: string | null;
  /** The neighbour the decision acted on, for UPDATE, SUPERSEDE and CHALLENGE. */
  readonly targetId: string | null;
}

/** The answer of one extraction chunk. */
export interface ExtractionResult {
  readonly report: ExtractionReport;
  readonly applied: readonly AppliedDecision[];
  /** The error code that failed the chunk (a store or maintenance code, or `INVALID_MODEL_OUTPUT`), never a message. */
  readonly errorCode?: string;
}

/**
 * Extraction: turns → candidate memories (model) → neighbours (retriever, `decision` purpose) → a decision per
 * candidate (model) → applied with compare-and-set.
 *
 * Every model answer is zod-validated and every decision checked against its neighbours BEFORE anything is
 * applied: one invalid answer fails the chunk with nothing written. A decision that meets a real
 * `ENGRAM_STORE_REVISION_CONFLICT` is re-decided once on fresh neighbours (counted in `conflicts`); a second
 * conflict drops that candidate. CHALLENGE marks the neighbour `conflicted` (hidden from search until the
 * heavy phase's `challenge` step resolves it) and adds the candidate tagged `challenges:<neighbour id>`.
 * A candidate whose exact text is already stored is a NOOP without a model call; a candidate without
 * neighbours is ADDed without a decision call. Users are boundaries: a chunk's rows are its user's (with its
 * tags and metadata), and its neighbours, duplicates and targets are rows of exactly that user (the agent's
 * own rows for a chunk without a user), never another user's.
 */
export interface Extractor {
  extract(chunk: ExtractionChunk, options?: { readonly signal?: AbortSignal }): Promise<ExtractionResult>;
}

const CANDIDATE_PROMPT = [
  'You extract durable memories from a conversation between a user and an AI agent.',
  'Return JSON {"memories":[{"content","kind","importance"}]} with at most 8 items.',
  'kind: "fact" for stable preferences, conventions, environment details and decisions; "semantic" for general knowledge;',
  '"episodic" for notable events. importance: 0..1. Write each memory as one self-contained sentence.',
  'Return {"memories":[]} when nothing is worth remembering.',
].join('\n');

const DECISION_PROMPT = [
  'You maintain an agent memory. Decide what to do with a NEW memory given EXISTING similar memories.',
  'Return JSON {"decision","targetId","content"}:',
  'ADD: store it as new (targetId null). NOOP: already known (targetId null).',
  'UPDATE: the new memory refines an existing one; targetId = its id, content = the merged text.',
  'SUPERSEDE: the new memory replaces an outdated one; targetId = its id, content = the replacement text.',
  'CHALLENGE: the new memory contradicts an existing one and it is unclear which is right; targetId = its id.',
  'targetId must be one of the EXISTING ids. content may be null to use the new memory as is.',
].join('\n');

const NEIGHBOUR_KINDS_LIST: readonly MemoryKind[] = ['fact', 'semantic', 'episodic', 'reflection'];
const NEIGHBOUR_KINDS: ReadonlySet<MemoryKind> = new Set<MemoryKind>(NEIGHBOUR_KINDS_LIST);

function zeroDecisions(): Record<ExtractionDecision, number> {
  return { ADD: 0, UPDATE: 0, SUPERSEDE: 0, NOOP: 0, CHALLENGE: 0 };
}

function renderTurns(turns: readonly ExtractionTurn[], maxChars: number): string {
  const lines: string[] = [];
  let used = 0;
  for (let i = turns.length - 1; i >= 0; i -= 1) {
    const turn = turns[i];
    if (turn === undefined) continue;
    const line = `[${turn.role}] ${turn.content}`;
    if (used + line.length > maxChars) {
      if (lines.length === 0) lines.push(line.slice(line.length - maxChars));
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.reverse().join('\n');
}

interface Candidate {
  readonly content: string;
  readonly kind: 'fact' | 'semantic' | 'episodic';
  readonly importance: number;
}

interface Planned {
  readonly candidate: Candidate;
  readonly decision: CheckedDecision;
  readonly neighbours: ReadonlyMap<string, MemoryRecord>;
}

class InvalidOutput extends Error {}

/** Creates an extractor. */
export function createExtractor(config: ExtractorConfig): Extractor {
  const { store, retriever } = config;
  const model = config.model ?? null;
  const observer = config.observer ?? noopMaintenanceObserver;
  const clock = config.clock ?? systemClock;
  const neighbourLimit = config.neighbours ?? 5;
  const maxInputChars = config.maxInputChars ?? 24_000;
  const maxOutputTokens = config.maxOutputTokens;

  async function neighboursOf(
    agentId: string,
    user: string | null,
    candidate: Candidate,
    signal: AbortSignal | undefined,
  ): Promise<Map<string, MemoryRecord>> {
    // A user's rows are asked for exactly; the agent's own have no filter of their own (users' rows are
    // dropped below), so more are read to still fill the neighbours.
    const hits = await trustedNeighbours(retriever, agentId, candidate.content, {
      limit: neighbourLimit * (user === null ? 4 : 2),
      kinds: NEIGHBOUR_KINDS_LIST,
      filter: groupFilter(user),
      signal,
    });
    const out = new Map<string, MemoryRecord>();
    for (const hit of hits) {
      const r = hit.record;
      if (r.agentId !== agentId || r.lifecycle !== 'active' || !NEIGHBOUR_KINDS.has(r.kind)) continue;
      // Only rows of exactly the chunk's user (or the agent's own for a chunk without one) are shown and acted on.
      if (!inGroup(r, user)) continue;
      out.set(r.id, r);
      if (out.size >= neighbourLimit) break;
    }
    return out;
  }

  async function decide(
    m: ModelPort,
    chunk: ScopedChunk,
    candidate: Candidate,
    signal: AbortSignal | undefined,
  ): Promise<Planned> {
    const { agentId, user } = chunk;
    const hashHits = await store.findByContentHash(agentId, contentHash(candidate.content));
    // Only a distilled memory of the same text and user makes the candidate redundant (an archived event does
    // not; another user's, or the agent's own for a user's chunk, does not either).
    if (hashHits.some((r) => r.lifecycle === 'active' && NEIGHBOUR_KINDS.has(r.kind) && inGroup(r, user))) {
      return { candidate, decision: { decision: 'NOOP' }, neighbours: new Map() };
    }
    const neighbours = await neighboursOf(agentId, user, candidate, signal);
    if (neighbours.size === 0) {
      return { candidate, decision: { decision: 'ADD', content: candidate.content }, neighbours };
    }
    const existing = [...neighbours.values()].map((r) => ({ id: r.id, kind: r.kind, content: r.content }));
    const messages: ModelMessage[] = [
      { role: 'system', content: DECISION_PROMPT },
      {
        role: 'user',
        content: JSON.stringify({ new: { content: candidate.content, kind: candidate.kind }, existing }),
      },
    ];
    const answer = await callModel(m, decisionOutputSchema, MODEL_OUTPUT_SCHEMA_NAMES.decision, messages, {
      signal,
      maxOutputTokens,
    });
    if (!answer.ok) throw answer.reason === 'invalid' ? new InvalidOutput() : modelFailure(answer);
    const checked = checkDecision(answer.value, new Set(neighbours.keys()), candidate.content);
    if (checked === null) throw new InvalidOutput();
    return { candidate, decision: checked, neighbours };
  }

  function modelFailure(answer: { reason: 'aborted' } | { reason: 'error'; code: string }): Error {
    const e = new Error('model call failed') as Error & { code: string };
    e.code = answer.reason === 'aborted' ? 'ENGRAM_MAINTENANCE_ABORTED' : answer.code;
    return e;
  }

  function newRow(
    chunk: ScopedChunk,
    candidate: Candidate,
    content: string,
    extraTags: string[] = [],
  ): NewMemory {
    return {
      agentId: chunk.agentId,
      kind: candidate.kind,
      content,
      importance: candidate.importance,
      tags: ['source:extraction', ...chunk.extraTags, ...extraTags],
      ...userField(chunk.user),
      ...(chunk.extraMetadata === null ? {} : { metadata: chunk.extraMetadata }),
      ...(chunk.sessionId === undefined ? {} : { sessionId: chunk.sessionId }),
      ...(chunk.seqFrom === undefined ? {} : { seqFrom: chunk.seqFrom }),
      ...(chunk.seqTo === undefined ? {} : { seqTo: chunk.seqTo }),
    };
  }

  /**
   * The patch of an UPDATE: the merged text and importance, and the chunk's tags and metadata added to the
   * target's (the target's user is kept; tags past the store's cap and metadata past its size are not added).
   */
  function updatePatch(
    chunk: ScopedChunk,
    target: MemoryRecord,
    plan: Planned,
    content: string,
  ): MemoryPatch {
    const patch: { -readonly [K in keyof MemoryPatch]: MemoryPatch[K] } = {
      content,
      importance: Math.max(target.importance, plan.candidate.importance),
    };
    if (chunk.extraTags.length > 0) {
      const tags = new Set(target.tags);
      for (const t of chunk.extraTags) if (tags.size < MAX_TAGS) tags.add(t);
      if (tags.size > target.tags.length) patch.tags = [...tags];
    }
    if (chunk.extraMetadata !== null) {
      const metadata = { ...target.metadata, ...chunk.extraMetadata };
      if (JSON.stringify(metadata).length <= MAX_METADATA_CHARS) patch.metadata = metadata;
    }
    return patch;
  }

  /** Applies one planned decision; throws the store error (a revision conflict among them) unchanged. */
  async function apply(chunk: ScopedChunk, plan: Planned): Promise<AppliedDecision> {
    const { agentId } = chunk;
    // Every write is scoped to the chunk's user: another user's row is not found, never changed.
    const scope = writeScope(chunk.user);
    const d = plan.decision;
    switch (d.decision) {
      case 'NOOP':
        return { decision: 'NOOP', id: null, targetId: null };
      case 'ADD': {
        // An exact duplicate stored since the decision (a concurrent writer) makes it a NOOP after all.
        const added = await store.insertUniqueMemory(newRow(chunk, plan.candidate, d.content));
        if (!added.created) return { decision: 'NOOP', id: null, targetId: null };
        return { decision: 'ADD', id: added.record.id, targetId: null };
      }
      case 'UPDATE': {
        const target = plan.neighbours.get(d.targetId);
        if (target === undefined) throw new InvalidOutput();
        const row = await store.updateMemory(
          agentId,
          target.id,
          target.revision,
          updatePatch(chunk, target, plan, d.content),
          scope,
        );
        return { decision: 'UPDATE', id: row.id, targetId: target.id };
      }
      case 'SUPERSEDE': {
        const target = plan.neighbours.get(d.targetId);
        if (target === undefined) throw new InvalidOutput();
        const { replacement } = await store.supersedeMemory(
          agentId,
          target.id,
          target.revision,
          newRow(chunk, plan.candidate, d.content),
          scope,
        );
        return { decision: 'SUPERSEDE', id: replacement.id, targetId: target.id };
      }
      case 'CHALLENGE': {
        const target = plan.neighbours.get(d.targetId);
        if (target === undefined) throw new InvalidOutput();
        // The compare-and-set move comes first: a conflict leaves nothing written.
        await store.setLifecycle(agentId, target.id, target.revision, 'conflicted', scope);
        const row = await store.insertMemory(
          newRow(chunk, plan.candidate, plan.candidate.content, [`challenges:${target.id}`]),
        );
        return { decision: 'CHALLENGE', id: row.id, targetId: target.id };
      }
      default:
        throw new InvalidOutput();
    }
  }

  async function run(chunk: ScopedChunk, signal: AbortSignal | undefined): Promise<ExtractionResult> {
    const started = clock.now();
    const decisions = zeroDecisions();
    const applied: AppliedDecision[] = [];
    let candidates = 0;
    let invalidOutputs = 0;
    let conflicts = 0;
    let outcome: ExtractionOutcome = 'completed';
    let errorCode: string | undefined;
    try {
      if (model === null) {
        outcome = 'skipped';
      } else {
        const answer = await callModel(
          model,
          candidatesOutputSchema,
          MODEL_OUTPUT_SCHEMA_NAMES.candidates,
          [
            { role: 'system', content: CANDIDATE_PROMPT },
            { role: 'user', content: renderTurns(chunk.turns, maxInputChars) },
          ],
          { signal, maxOutputTokens },
        );
        if (!answer.ok) throw answer.reason === 'invalid' ? new InvalidOutput() : modelFailure(answer);
        // Exact duplicates inside one chunk count once.
        const seen = new Set<string>();
        const list: Candidate[] = [];
        for (const c of answer.value.memories) {
          const h = contentHash(c.content);
          if (seen.has(h)) continue;
          seen.add(h);
          list.push(c);
        }
        candidates = list.length;
        // Decide everything first: one invalid answer fails the chunk before anything is written.
        const plans: Planned[] = [];
        for (const candidate of list) {
          if (signal?.aborted === true) throw modelFailure({ reason: 'aborted' });
          plans.push(await decide(model, chunk, candidate, signal));
        }
        for (const plan of plans) {
          if (signal?.aborted === true) throw modelFailure({ reason: 'aborted' });
          let done: AppliedDecision | null = null;
          try {
            done = await apply(chunk, plan);
          } catch (error) {
            if (!isRevisionConflict(error) && engramErrorCode(error) !== 'ENGRAM_STORE_NOT_FOUND')
              throw error;
            conflicts += 1;
            // A real conflict: re-read the neighbours and re-decide once; never a blind retry.
            let again: Planned;
            try {
              again = await decide(model, chunk, plan.candidate, signal);
            } catch (redecideError) {
              if (!(redecideError instanceof InvalidOutput)) throw redecideError;
              invalidOutputs += 1;
              outcome = 'failed';
              errorCode = 'ENGRAM_MAINTENANCE_INVALID_MODEL_OUTPUT';
              continue;
            }
            try {
              done = await apply(chunk, again);
            } catch (secondError) {
              if (
                !isRevisionConflict(secondError) &&
                engramErrorCode(secondError) !== 'ENGRAM_STORE_NOT_FOUND'
              ) {
                throw secondError;
              }
              conflicts += 1;
            }
          }
          if (done !== null) {
            applied.push(done);
            decisions[done.decision] += 1;
          }
        }
      }
    } catch (error) {
      if (error instanceof InvalidOutput) {
        invalidOutputs += 1;
        outcome = 'failed';
        errorCode = 'ENGRAM_MAINTENANCE_INVALID_MODEL_OUTPUT';
      } else if (signal?.aborted === true || engramErrorCode(error) === 'ENGRAM_MAINTENANCE_ABORTED') {
        outcome = 'cancelled';
        errorCode = 'ENGRAM_MAINTENANCE_ABORTED';
      } else {
        outcome = 'failed';
        errorCode = engramErrorCode(error) ?? 'UNKNOWN';
      }
    }
    const report: ExtractionReport = {
      agentId: chunk.agentId,
      outcome,
      durationMs: Math.max(0, clock.now() - started),
      candidates,
      decisions,
      invalidOutputs,
      conflicts,
    };
    safeNotify(() => observer.onExtraction?.(report));
    return { report, applied, ...(errorCode === undefined ? {} : { errorCode }) };
  }

  return {
    async extract(input, options = {}): Promise<ExtractionResult> {
      checkIdArgument(input.agentId, 'agentId');
      if (input.sessionId !== undefined) checkIdArgument(input.sessionId, 'sessionId');
      const chunk: ScopedChunk = {
        ...input,
        user: checkUserId(input.userId),
        extraTags: checkChunkTags(input.tags),
        extraMetadata: checkChunkMetadata(input.metadata),
      };
      const queue = config.queue;
      if (queue === undefined || model === null) return run(chunk, options.signal);
      try {
        return await queue.submit(
          { agentId: chunk.agentId, sessionId: chunk.sessionId ?? '' },
          (signal) => run(chunk, signal),
          options.signal === undefined ? {} : { signal: options.signal },
        );
      } catch (error) {
        // Rejected by the queue before running (full, closed, cancelled): recorded, nothing applied.
        const cancelled = isEngramMaintenanceError(error) && error.code !== 'ENGRAM_MAINTENANCE_CAPACITY';
        const report: ExtractionReport = {
          agentId: chunk.agentId,
          outcome: cancelled ? 'cancelled' : 'failed',
          durationMs: 0,
          candidates: 0,
          decisions: zeroDecisions(),
          invalidOutputs: 0,
          conflicts: 0,
        };
        safeNotify(() => observer.onExtraction?.(report));
        return { report, applied: [], errorCode: engramErrorCode(error) ?? 'UNKNOWN' };
      }
    },
  };
}
