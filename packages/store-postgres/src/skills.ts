/**
 * The skills slice on PostgreSQL: names unique per agent case-insensitively by a unique index on
 * `(agent_id, lower(name))`; a write is one `INSERT … ON CONFLICT DO UPDATE` (create or replace, never
 * read-then-write).
 */

import type { SkillInput, SkillRecord } from '@engram/store';
import { prepareSkill, storedRows, validateAgentId, validateSkillName } from '@engram/store/port-kit';
import type { PgContext } from './context.js';

/** Creates or replaces a skill. */
export function writeSkill(
  ctx: PgContext,
  input: SkillInput,
): Promise<{ readonly skill: SkillRecord; readonly created: boolean }> {
  return ctx.op('writeSkill', async () => {
    const s = prepareSkill(input, ctx.limits);
    const now = ctx.now();
    const rows = await ctx.q<storedRows.SkillRow & { created: boolean }>(
      ctx.pool,
      'write',
      `INSERT INTO skills(agent_id, name, description, content, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (agent_id, lower(name)) DO UPDATE
         SET name = EXCLUDED.name, description = EXCLUDED.description, content = EXCLUDED.content,
           updated_at = EXCLUDED.updated_at
       RETURNING *, (xmax = 0) AS created`,
      [s.agentId, s.name, s.description, s.content, now],
    );
    const row = rows[0] as storedRows.SkillRow & { created: boolean };
    return { skill: storedRows.toSkill(row), created: row.created };
  });
}

/** Deletes a skill; false when it did not exist. */
export function deleteSkill(ctx: PgContext, agentId: string, name: string): Promise<boolean> {
  return ctx.op('deleteSkill', async () => {
    validateAgentId(agentId);
    validateSkillName(name);
    const n = await ctx.run(
      ctx.pool,
      'write',
      'DELETE FROM skills WHERE agent_id = $1 AND lower(name) = lower($2)',
      [agentId, name],
    );
    return n > 0;
  });
}

/** The agent's skills by name (case-insensitive order). */
export function listSkills(ctx: PgContext, agentId: string): Promise<readonly SkillRecord[]> {
  return ctx.op('listSkills', async () => {
    validateAgentId(agentId);
    const rows = await ctx.q<storedRows.SkillRow>(
      ctx.pool,
      'read',
      'SELECT * FROM skills WHERE agent_id = $1 ORDER BY lower(name) COLLATE "C", name COLLATE "C"',
      [agentId],
    );
    return rows.map((r) => storedRows.toSkill(r));
  });
}

/** One skill by name (case-insensitive), or null. */
export function getSkill(ctx: PgContext, agentId: string, name: string): Promise<SkillRecord | null> {
  return ctx.op('getSkill', async () => {
    validateAgentId(agentId);
    validateSkillName(name);
    const rows = await ctx.q<storedRows.SkillRow>(
      ctx.pool,
      'read',
      'SELECT * FROM skills WHERE agent_id = $1 AND lower(name) = lower($2)',
      [agentId, name],
    );
    return rows[0] === undefined ? null : storedRows.toSkill(rows[0]);
  });
}
