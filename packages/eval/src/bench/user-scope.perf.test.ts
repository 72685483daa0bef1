import { describe, expect, it } from 'vitest';
import { formatUserScopeLines, rowUser, runUserScopeScenario, USER_SCOPE_SCENARIO } from './user-scope.js';

// The user-scope scenario of `pnpm bench` at a small size: it runs end to end and reports its ratios; never a
// wall-clock figure asserted (the bench measures those, `--only userScope100k`).

describe('the user-scope bench scenario', () => {
  it('spreads the rows over the agent and its users: every 20th row the agent’s own, the rest round-robin', () => {
    expect(rowUser(0, 10)).toBeNull();
    expect(rowUser(20, 10)).toBeNull();
    expect(rowUser(1, 10)).toBe('user-00000');
    expect(rowUser(2, 10)).toBe('user-00001');
    const counts = new Map<string | null, number>();
    for (let i = 0; i < 2000; i += 1) {
      const u = rowUser(i, 19);
      counts.set(u, (counts.get(u) ?? 0) + 1);
    }
    expect(counts.get(null)).toBe(100);
    expect(counts.size).toBe(20);
    for (const [u, n] of counts) if (u !== null) expect(n).toBe(100);
  });

  it('times the same queries unscoped and for one user, and no scoped answer holds another user’s memory', async () => {
    const lines: string[] = [];
    const report = await runUserScopeScenario({
      rows: 2000,
      users: 19,
      queries: 30,
      dimensions: 128,
      batchSize: 500,
      log: (line) => lines.push(line),
    });
    expect(report).toMatchObject({ rows: 2000, users: 19, agentRows: 100, dimensions: 128, queries: 30 });
    expect(report.leaks).toBe(0);
    // The scoped search finds its target (the query's user owns it, or it is the agent's own) as well as the unscoped one.
    expect(report.scopedRecallAt5).toBeGreaterThanOrEqual(report.recallAt5);
    for (const pair of [report.hybrid, report.vector, report.lexical]) {
      expect(pair.ratioP50).toBeGreaterThan(0);
      expect(Number.isFinite(pair.ratioP95)).toBe(true);
    }
    const table = formatUserScopeLines(report).join('\n');
    expect(table).toContain(USER_SCOPE_SCENARIO);
    expect(table).toMatch(/hybrid {3}p50 .* \(×\d+\.\d{3}\)/);
  }, 120_000);
});
