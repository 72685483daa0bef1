import { describe, expect, it } from 'vitest';
import { checkMemoryFilter, matchesMemoryFilter, type NormalisedFilter } from './memory-filter.js';

function ok(value: unknown): NormalisedFilter {
  const checked = checkMemoryFilter(value);
  if (!checked.ok) throw new Error(`refused: ${checked.problem}`);
  return checked.filter;
}

const row = (
  metadata: Record<string, unknown>,
  userId: string | null = 'u1',
  sessionId: string | null = null,
) => ({
  userId,
  sessionId,
  metadata,
});

describe('checkMemoryFilter', () => {
  it('normalises eq into a one-value in and builds quoted JSON paths', () => {
    expect(ok({ userId: 'u1', metadata: [{ key: 'project.name', op: 'eq', value: 'engram' }] })).toEqual({
      userId: 'u1',
      forUser: null,
      sessionId: null,
      conditions: [{ path: '$."project"."name"', op: 'in', values: ['engram'] }],
    });
  });

  it('refuses malformed filters with a closed problem code, never throwing', () => {
    const cases: [unknown, string][] = [
      [null, 'notObject'],
      [{ user: 'x' }, 'unknownField'],
      [{ userId: '' }, 'badUserId'],
      [{ sessionId: 'a\u0000b' }, 'badSessionId'],
      [{ forUser: '' }, 'badForUser'],
      [{ forUser: 7 }, 'badForUser'],
      [{ metadata: {} }, 'badMetadataList'],
      [{ metadata: Array.from({ length: 17 }, () => ({ key: 'a', op: 'exists' })) }, 'tooManyConditions'],
      [{ metadata: [{ key: 'a"b', op: 'exists' }] }, 'badKey'],
      [{ metadata: [{ key: 'a.b.c.d.e', op: 'exists' }] }, 'badKey'],
      [{ metadata: [{ key: 'a', op: 'like' }] }, 'badOperator'],
      [{ metadata: [{ key: 'a', op: 'eq', value: { x: 1 } }] }, 'badValue'],
      [{ metadata: [{ key: 'a', op: 'in', values: [] }] }, 'badValue'],
      [{ metadata: [{ key: 'a', op: 'eq', value: Number.NaN }] }, 'badValue'],
      [{ metadata: [{ key: 'a', op: 'range' }] }, 'badRange'],
      [{ metadata: [{ key: 'a', op: 'range', gt: '1' }] }, 'badRange'],
      [{ metadata: [{ key: 'a', op: 'exists', value: 1 }] }, 'badCondition'],
    ];
    for (const [value, problem] of cases) {
      expect(checkMemoryFilter(value)).toEqual({ ok: false, problem });
    }
  });
});

describe('matchesMemoryFilter', () => {
  it("forUser passes the agent's own memories and that user's, never another user's", () => {
    const f = ok({ forUser: 'bob' });
    expect(f.forUser).toBe('bob');
    expect(matchesMemoryFilter(f, row({}, null))).toBe(true);
    expect(matchesMemoryFilter(f, row({}, 'bob'))).toBe(true);
    expect(matchesMemoryFilter(f, row({}, 'alice'))).toBe(false);
    // With the exact userId as well, both must hold: only Bob's own rows.
    const both = ok({ forUser: 'bob', userId: 'bob' });
    expect(matchesMemoryFilter(both, row({}, null))).toBe(false);
    expect(matchesMemoryFilter(both, row({}, 'bob'))).toBe(true);
  });

  it('compares values of the same JSON type only, numbers numerically', () => {
    const f = ok({ metadata: [{ key: 'n', op: 'eq', value: 1 }] });
    expect(matchesMemoryFilter(f, row({ n: 1 }))).toBe(true);
    expect(matchesMemoryFilter(f, row({ n: 1.0 }))).toBe(true);
    expect(matchesMemoryFilter(f, row({ n: '1' }))).toBe(false);
    expect(matchesMemoryFilter(f, row({ n: true }))).toBe(false);
  });

  it('applies in, range, exists and absent, and the scopes', () => {
    const f = ok({
      userId: 'u1',
      metadata: [
        { key: 'lang', op: 'in', values: ['ts', 'go'] },
        { key: 'stars', op: 'range', gte: 10, lt: 100 },
        { key: 'draft', op: 'absent' },
        { key: 'team.lead', op: 'exists' },
      ],
    });
    const good = { lang: 'ts', stars: 10, team: { lead: null } };
    expect(matchesMemoryFilter(f, row(good))).toBe(true);
    expect(matchesMemoryFilter(f, row(good, 'u2'))).toBe(false);
    expect(matchesMemoryFilter(f, row({ ...good, lang: 'rust' }))).toBe(false);
    expect(matchesMemoryFilter(f, row({ ...good, stars: 100 }))).toBe(false);
    expect(matchesMemoryFilter(f, row({ ...good, stars: '50' }))).toBe(false);
    expect(matchesMemoryFilter(f, row({ ...good, draft: false }))).toBe(false);
    expect(matchesMemoryFilter(f, row({ lang: 'ts', stars: 10, team: {} }))).toBe(false);
  });
});
