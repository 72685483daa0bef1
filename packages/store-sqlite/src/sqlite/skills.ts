/**
 * The skills slice: named instructions per agent (names unique per agent, case-insensitively).
 */

import type { SkillInput, SkillRecord } from '@engram/store/port-kit';
import { prepareSkill, storedRows, validateAgentId, validateSkillName } from '@engram/store/port-kit';
import type { StoreContext } from './context.js';

/** Creates or replaces a skill (names are unique per agent, case-insensitively). */
export function writeSkill(
  ctx: StoreContext,
  input: SkillInput,
): Promise<{ readonly skill: SkillRecord; readonly created: boolean }> {
  return ctx.op('writeSkill', () => {
    const s = prepareSkill(input, ctx.limits);
    const now = ctx.now();
    return ctx.tx(() => {
      const existing = ctx
        .stmt('read', 'SELECT * FROM skills WHERE agent_id = ? AND name = ?')
        .get<storedRows.SkillRow>(s.agentId, s.name);
      if (existing === undefined) {
        ctx
          .stmt(
            'write',
            'INSERT INTO skills(agent_id, name, description, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
          )
          .run(s.agentId, s.name, s.description, s.content, now, now);
        return { skill: { ...s, createdAt: now, updatedAt: now }, created: true };
      }
      ctx
        .stmt(
          'write',
          'UPDATE skills SET name = ?, description = ?, content = ?, updated_at = ? WHERE agent_id = ? AND name = ?',
        )
        .run(s.name, s.description, s.content, now, s.agentId, s.name);
      return { skill: { ...s, createdAt: Number(existing.created_at), updatedAt: now }, created: false };
    });
  });
}

/** Deletes a skill; false when it did not exist. */
export function deleteSkill(ctx: StoreContext, agentId: string, name: string): Promise<boolean> {
  return ctx.op('deleteSkill', () => {
    validateAgentId(agentId);
    validateSkillName(name);
    return (
      ctx.stmt('write', 'DELETE FROM skills WHERE agent_id = ? AND name = ?').run(agentId, name).changes > 0
    );
  });
}

/** The agent's skills by name. */
export function listSkills(ctx: StoreContext, agentId: string): Promise<readonly SkillRecord[]> {
  return ctx.op('listSkills', () => {
    validateAgentId(agentId);
    return ctx
      .stmt('read', 'SELECT * FROM skills WHERE agent_id = ? ORDER BY name')
      .all<storedRows.SkillRow>(agentId)
      .map((r) => storedRows.toSkill(r));
  });
}

/** One skill by name (case-insensitive), or null. */
export function getSkill(ctx: StoreContext, agentId: string, name: string): Promise<SkillRecord | null> {
  return ctx.op('getSkill', () => {
    validateAgentId(agentId);
    validateSkillName(name);
    const row = ctx
      .stmt('read', 'SELECT * FROM skills WHERE agent_id = ? AND name = ?')
      .get<storedRows.SkillRow>(agentId, name);
    return row === undefined ? null : storedRows.toSkill(row);
  });
}
