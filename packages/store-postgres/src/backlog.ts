/**
 * The backlog reads of the port on PostgreSQL: the rows whose embedding failed with the error code the drain
 * committed (migration 7: `memories.embedding_error`, `memories.embedding_failed_at`), and the sessions with
 * their entry counts. What is stored is read as untrusted: a code that is not one reads as `unknown`.
 */
import type {
  FailedEmbedding,
  ListFailedEmbeddingsOptions,
  ListSessionSummariesOptions,
  SessionSummary,
} from '@engram/store/port-kit';
import {
  checkFailedEmbeddingsCall,
  checkSessionSummariesCall,
  readBacklogNumber,
  readEmbeddingErrorCode,
} from '@engram/store/port-kit';
import type { PgContext } from './context.js';

/** Migration 7: a failed row keeps its error code and when it failed; failed rows are listed by agent and id. */
export const EMBEDDING_ERROR_MIGRATION_SQL = `
ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding_error text;
ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding_failed_at bigint;
CREATE INDEX IF NOT EXISTS memories_embedding_failed ON memories(agent_id, id COLLATE "C")
  WHERE embedding_state = 'error';
`;

type FailedRow = {
  id: string;
  agent_id: string;
  user_id: string | null;
  code: unknown;
  attempts: unknown;
  failed_at: unknown;
};

/** The agent's `error` rows by id, in the user scope, each with its stored code read as untrusted. */
export function listFailedEmbeddings(
  ctx: PgContext,
  agentId: string,
  options?: ListFailedEmbeddingsOptions,
): Promise<readonly FailedEmbedding[]> {
  return ctx.op('listFailedEmbeddings', async () => {
    const call = checkFailedEmbeddingsCall(agentId, options);
    const rows = await ctx.q<FailedRow>(
      ctx.pool,
      'read',
      `SELECT id, agent_id, user_id, embedding_error AS code, embedding_attempts AS attempts,
         embedding_failed_at AS failed_at
       FROM memories WHERE agent_id = $1 AND embedding_state = 'error'
         AND ($2::text IS NULL OR user_id IS NULL OR user_id = $2::text)
         AND ($3::text IS NULL OR id COLLATE "C" > $3::text COLLATE "C")
       ORDER BY id COLLATE "C" LIMIT $4`,
      [call.agentId, call.forUser, call.afterId, call.limit],
    );
    return rows.map(
      (r): FailedEmbedding => ({
        id: r.id,
        agentId: r.agent_id,
        userId: r.user_id,
        errorCode: readEmbeddingErrorCode(r.code),
        attempts: readBacklogNumber(r.attempts, 0),
        failedAt: readBacklogNumber(r.failed_at, null),
      }),
    );
  });
}

/** The agent's sessions with logged entries, by id, counted in the user scope. */
export function listSessionSummaries(
  ctx: PgContext,
  agentId: string,
  options?: ListSessionSummariesOptions,
): Promise<readonly SessionSummary[]> {
  return ctx.op('listSessionSummaries', async () => {
    const call = checkSessionSummariesCall(agentId, options);
    const rows = await ctx.q<{ session_id: string; entries: unknown; first_at: unknown; last_at: unknown }>(
      ctx.pool,
      'read',
      `SELECT session_id, count(*) AS entries, min(created_at) AS first_at, max(created_at) AS last_at
       FROM events WHERE agent_id = $1
         AND ($2::text IS NULL OR user_id IS NULL OR user_id = $2::text)
         AND ($3::text IS NULL OR session_id COLLATE "C" > $3::text COLLATE "C")
       GROUP BY session_id ORDER BY session_id COLLATE "C" LIMIT $4`,
      [call.agentId, call.forUser, call.afterSessionId, call.limit],
    );
    return rows.map((r) => ({
      sessionId: r.session_id,
      entries: readBacklogNumber(r.entries, 0),
      firstAt: readBacklogNumber(r.first_at, 0),
      lastAt: readBacklogNumber(r.last_at, 0),
    }));
  });
}
