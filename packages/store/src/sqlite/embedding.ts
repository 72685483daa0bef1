/**
 * The embedding slice (the drain's view): pending rows, revision-checked commits of outcomes, the backlog, and
 * the explicit re-index to another embedder profile.
 */
import { EngramStoreError, invalidInput } from '../errors.js';
import { vectorTableSql } from '../schema.js';
import type {
  EmbeddingBacklog,
  EmbeddingCommitResult,
  EmbeddingOutcome,
  EmbeddingProfile,
  ListPendingOptions,
  PendingEmbedding,
} from '../types.js';
import { validateAgentId, validateId, validateInteger, validateLimit, validateVector } from '../validate.js';
import { checkProfile } from './config.js';
import type { StoreContext } from './context.js';
import { embeddingFingerprint, setMeta } from './migrate.js';
import { deleteVector, writeVector } from './mirrors.js';

/**
 * Active rows waiting for an embedding, in insertion order: `pending` rows, plus `error` rows with fewer than
 * `retryErrorsBelowAttempts` attempts when asked.
 */
export function listPendingEmbeddings(
  ctx: StoreContext,
  options: ListPendingOptions,
): Promise<readonly PendingEmbedding[]> {
  return ctx.op('listPendingEmbeddings', () => {
    if (typeof options !== 'object' || options === null) throw invalidInput('options must be an object');
    const agentId = options.agentId === undefined ? null : validateAgentId(options.agentId);
    const limit = validateLimit(options.limit, 'limit', 1000, 64);
    const below =
      options.retryErrorsBelowAttempts === undefined
        ? 0
        : validateInteger(options.retryErrorsBelowAttempts, 'retryErrorsBelowAttempts', 0);
    const agentCond = agentId === null ? '' : 'AND agent_id = @agent';
    const stateCond =
      below > 0
        ? "(embedding_state = 'pending' OR (embedding_state = 'error' AND embedding_attempts < @below))"
        : "embedding_state = 'pending'";
    type Row = {
      id: string;
      agent_id: string;
      content: string;
      revision: number;
      embedding_attempts: number;
    };
    const rows = ctx
      .stmt(
        'read',
        `SELECT id, agent_id, content, revision, embedding_attempts FROM memories
         WHERE ${stateCond} AND lifecycle = 'active' ${agentCond} ORDER BY rid LIMIT @limit`,
      )
      .all<Row>({ limit, ...(agentId === null ? {} : { agent: agentId }), ...(below > 0 ? { below } : {}) });
    return rows.map((r) => ({
      id: r.id,
      agentId: r.agent_id,
      content: r.content,
      revision: r.revision,
      embeddingAttempts: r.embedding_attempts,
    }));
  });
}

function checkOutcomes(ctx: StoreContext, outcomes: readonly EmbeddingOutcome[]): void {
  if (!Array.isArray(outcomes)) throw invalidInput('outcomes must be an array');
  const seen = new Set<string>();
  for (const [i, o] of outcomes.entries()) {
    if (typeof o !== 'object' || o === null) throw invalidInput('outcome must be an object');
    validateId(o.id, `outcomes[${i}].id`);
    if (seen.has(o.id)) throw invalidInput('outcomes name the same id twice');
    seen.add(o.id);
    validateInteger(o.revision, `outcomes[${i}].revision`, 1);
    if (o.state === 'ready') {
      if (ctx.profile === null) {
        throw new EngramStoreError(
          'ENGRAM_STORE_VECTOR_UNAVAILABLE',
          'the store has no embedder profile, so it cannot store vectors',
        );
      }
      validateVector(o.vector, ctx.profile.dimensions, `outcomes[${i}].vector`);
    } else if (o.state !== 'error' && o.state !== 'ftsOnly') {
      throw invalidInput(`outcomes[${i}].state must be ready, error or ftsOnly`);
    }
  }
}

/** Commits embedding outcomes in one transaction; rows whose revision changed (or that are gone) are `stale`. */
export function commitEmbeddings(
  ctx: StoreContext,
  outcomes: readonly EmbeddingOutcome[],
): Promise<EmbeddingCommitResult> {
  return ctx.op('commitEmbeddings', () => {
    checkOutcomes(ctx, outcomes);
    const result = { ready: 0, error: 0, ftsOnly: 0, stale: 0 };
    if (outcomes.length === 0) return result;
    return ctx.tx(() => {
      for (const o of outcomes) {
        const row = ctx
          .stmt('read', 'SELECT rid, agent_id, revision FROM memories WHERE id = ?')
          .get<{ rid: number; agent_id: string; revision: number }>(o.id);
        if (row === undefined || row.revision !== o.revision) {
          result.stale += 1;
          continue;
        }
        deleteVector(ctx, row.rid);
        if (o.state === 'ready') {
          writeVector(ctx, row.rid, row.agent_id, o.vector);
          ctx
            .stmt(
              'write',
              "UPDATE memories SET embedding_state = 'ready', embedding_fingerprint = ? WHERE rid = ?",
            )
            .run(ctx.fingerprint, row.rid);
          result.ready += 1;
        } else if (o.state === 'error') {
          ctx
            .stmt(
              'write',
              `UPDATE memories SET embedding_state = 'error', embedding_fingerprint = NULL,
               embedding_attempts = embedding_attempts + 1 WHERE rid = ?`,
            )
            .run(row.rid);
          result.error += 1;
        } else {
          ctx
            .stmt(
              'write',
              "UPDATE memories SET embedding_state = 'ftsOnly', embedding_fingerprint = NULL WHERE rid = ?",
            )
            .run(row.rid);
          result.ftsOnly += 1;
        }
      }
      return result;
    });
  });
}

/** Active `pending` rows, in total and per agent. */
export function countEmbeddingBacklog(ctx: StoreContext): Promise<EmbeddingBacklog> {
  return ctx.op('countEmbeddingBacklog', () => {
    const rows = ctx
      .stmt(
        'read',
        `SELECT agent_id, count(*) AS n FROM memories WHERE embedding_state = 'pending' AND lifecycle = 'active'
         GROUP BY agent_id ORDER BY agent_id`,
      )
      .all<{ agent_id: string; n: number }>();
    const byAgent: Record<string, number> = {};
    let total = 0;
    for (const r of rows) {
      byAgent[r.agent_id] = r.n;
      total += r.n;
    }
    return { total, byAgent };
  });
}

/**
 * The explicit re-index: drops every vector, recreates the vector table for `profile` (or none), resets every
 * row to `pending` and records the new fingerprint.
 */
export function resetEmbeddings(ctx: StoreContext, profile: EmbeddingProfile | null): Promise<void> {
  return ctx.op('resetEmbeddings', () => {
    checkProfile(profile);
    const next = profile === null ? null : { id: profile.id, dimensions: profile.dimensions };
    const fingerprint = embeddingFingerprint(next);
    ctx.tx(() => {
      ctx.db.exec('DROP TABLE IF EXISTS memories_vec');
      ctx.count('meta');
      if (next !== null) {
        ctx.db.exec(vectorTableSql(next.dimensions));
        ctx.count('meta');
      }
      ctx
        .stmt(
          'write',
          `UPDATE memories SET embedding_state = 'pending', embedding_fingerprint = NULL, embedding_attempts = 0`,
        )
        .run();
      setMeta(ctx, 'embedding_fingerprint', fingerprint);
    });
    // Statements on the old vector table are stale now.
    for (const sql of [...ctx.statements.keys()]) {
      if (sql.includes('memories_vec')) ctx.statements.delete(sql);
    }
    ctx.bindProfile(next, fingerprint);
  });
}
