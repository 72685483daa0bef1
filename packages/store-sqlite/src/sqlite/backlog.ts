/**
 * The backlog reads of the port: the rows whose embedding failed with the error code the drain committed
 * (schema 17: `memories.embedding_error`, `memories.embedding_failed_at`), and the sessions with their entry
 * counts. What is stored is read as untrusted: a code that is not one reads as `unknown`, never an error.
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
import type { SqliteDatabase } from '../native.js';
import type { StoreContext } from './context.js';

/**
 * Schema 17: each failed row keeps its error code and when it failed (null for rows that failed before), and
 * the failed rows of an agent are listed by id from a partial index.
 */
export function addEmbeddingErrorColumns(db: SqliteDatabase): void {
  // A file whose recorded version was set back by hand may have the columns already.
  const has = (name: string): boolean =>
    db.prepare("SELECT 1 AS x FROM pragma_table_info('memories') WHERE name = ?").get(name) !== undefined;
  if (!has('embedding_error')) db.exec('ALTER TABLE memories ADD COLUMN embedding_error TEXT');
  if (!has('embedding_failed_at')) db.exec('ALTER TABLE memories ADD COLUMN embedding_failed_at INTEGER');
  db.exec(
    "CREATE INDEX IF NOT EXISTS memories_embedding_failed ON memories(agent_id, id) WHERE embedding_state = 'error'",
  );
}

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
  ctx: StoreContext,
  agentId: string,
  options?: ListFailedEmbeddingsOptions,
): Promise<readonly FailedEmbedding[]> {
  return ctx.op('listFailedEmbeddings', () => {
    const call = checkFailedEmbeddingsCall(agentId, options);
    const rows = ctx
      .stmt(
        'read',
        `SELECT id, agent_id, user_id, embedding_error AS code, embedding_attempts AS attempts,
           embedding_failed_at AS failed_at
         FROM memories WHERE agent_id = @agent AND embedding_state = 'error'
           ${call.forUser === null ? '' : 'AND (user_id IS NULL OR user_id = @forUser)'}
           ${call.afterId === null ? '' : 'AND id > @after'}
         ORDER BY id LIMIT @limit`,
      )
      .all<FailedRow>({ agent: call.agentId, forUser: call.forUser, after: call.afterId, limit: call.limit });
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
  ctx: StoreContext,
  agentId: string,
  options?: ListSessionSummariesOptions,
): Promise<readonly SessionSummary[]> {
  return ctx.op('listSessionSummaries', () => {
    const call = checkSessionSummariesCall(agentId, options);
    const rows = ctx
      .stmt(
        'read',
        `SELECT session_id AS sessionId, count(*) AS entries, min(created_at) AS firstAt, max(created_at) AS lastAt
         FROM events WHERE agent_id = @agent
           ${call.forUser === null ? '' : 'AND (user_id IS NULL OR user_id = @forUser)'}
           ${call.afterSessionId === null ? '' : 'AND session_id > @after'}
         GROUP BY session_id ORDER BY session_id LIMIT @limit`,
      )
      .all<{ sessionId: string; entries: unknown; firstAt: unknown; lastAt: unknown }>({
        agent: call.agentId,
        forUser: call.forUser,
        after: call.afterSessionId,
        limit: call.limit,
      });
    return rows.map((r) => ({
      sessionId: r.sessionId,
      entries: readBacklogNumber(r.entries, 0),
      firstAt: readBacklogNumber(r.firstAt, 0),
      lastAt: readBacklogNumber(r.lastAt, 0),
    }));
  });
}
