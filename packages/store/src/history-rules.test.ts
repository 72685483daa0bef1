import { FRESH_MEMORY_FIELDS } from '@engram/test-support';
import { describe, expect, it } from 'vitest';
import {
  assembleHistory,
  type ChainLookup,
  goneMemberVisible,
  type HistoryRow,
  historyValues,
  MAX_SUPERSEDE_CHAIN,
  supersedeChainAsync,
  supersedeChainSync,
  UNKNOWN_HISTORY_USER,
} from './history-rules.js';
import type { MemoryRecord } from './types.js';

/** A store's supersede links as `replaced → successor`. */
function lookupIn(successorOf: Readonly<Record<string, string>>): (step: ChainLookup) => readonly string[] {
  return ({ direction, of }) => {
    if (direction === 'newer') {
      const next = successorOf[of];
      return next === undefined ? [] : [next];
    }
    return Object.entries(successorOf)
      .filter(([, successor]) => successor === of)
      .map(([replaced]) => replaced)
      .reverse();
  };
}

function record(id: string, createdAt: number): MemoryRecord {
  return {
    ...FRESH_MEMORY_FIELDS,
    id,
    agentId: 'a',
    kind: 'fact',
    content: id,
    contentHash: id,
    importance: 0.5,
    confidence: 0.5,
    tags: [],
    sessionId: null,
    seqFrom: null,
    seqTo: null,
    createdAt,
    updatedAt: createdAt,
    validFrom: createdAt,
  };
}

function row(
  memoryId: string,
  action: string,
  at: number | string,
  extra: Partial<HistoryRow> = {},
): HistoryRow {
  return {
    memory_id: memoryId,
    action,
    at,
    revision: null,
    actor: null,
    reason: null,
    related_id: null,
    content: null,
    ...extra,
  };
}

describe('the supersede chain walk', () => {
  it('lists the predecessors oldest first, the id, then its successors', () => {
    const links = { v1: 'v2', v2: 'v3', v3: 'v4' };
    expect(supersedeChainSync('v2', lookupIn(links))).toEqual(['v1', 'v2', 'v3', 'v4']);
    expect(supersedeChainSync('v4', lookupIn(links))).toEqual(['v1', 'v2', 'v3', 'v4']);
    expect(supersedeChainSync('alone', lookupIn(links))).toEqual(['alone']);
  });

  it('orders merged sources the same whatever order the store reads them in', () => {
    const one = supersedeChainSync('m', lookupIn({ c: 'm', a: 'm', b: 'm' }));
    const other = supersedeChainSync('m', lookupIn({ b: 'm', c: 'm', a: 'm' }));
    expect(one).toEqual(other);
    expect(one).toEqual(['c', 'b', 'a', 'm']);
  });

  it('ends on a cycle in damaged data instead of looping', () => {
    expect(supersedeChainSync('x', lookupIn({ x: 'y', y: 'x' }))).toEqual(['y', 'x']);
  });

  it('stops at the chain bound', () => {
    const links: Record<string, string> = {};
    for (let i = 0; i < MAX_SUPERSEDE_CHAIN + 50; i++) links[`m${i}`] = `m${i + 1}`;
    expect(supersedeChainSync('m0', lookupIn(links))).toHaveLength(MAX_SUPERSEDE_CHAIN);
  });

  it('walks the same with an asynchronous lookup', async () => {
    const links = { v1: 'v2', v2: 'v3' };
    const sync = lookupIn(links);
    await expect(supersedeChainAsync('v2', async (step) => sync(step))).resolves.toEqual(['v1', 'v2', 'v3']);
  });
});

describe('a recorded history entry', () => {
  it('lists its values in column order, absent fields as null and an absent user as unknown', () => {
    expect(historyValues({ agentId: 'a', memoryId: 'm', action: 'forgotten', at: 5, actor: 'user' })).toEqual(
      ['a', 'm', 'forgotten', 5, null, 'user', null, null, null, UNKNOWN_HISTORY_USER],
    );
    const own = { agentId: 'a', memoryId: 'm', action: 'forgotten', at: 5 } as const;
    expect(historyValues({ ...own, userId: null })[9]).toBeNull();
    expect(historyValues({ ...own, userId: 'bob' })[9]).toBe('bob');
  });
});

describe('a memory lineage', () => {
  it('starts with a creation per stored row, related to its predecessor, then the entries in time order', () => {
    const history = assembleHistory(
      'v2',
      ['v1', 'v2'],
      [record('v1', 10), record('v2', 20)],
      [row('v1', 'superseded', '20', { revision: '2', related_id: 'v2' }), row('v2', 'updated', 30)],
    );
    expect(history.records.map((r) => r.id)).toEqual(['v1', 'v2']);
    expect(history.entries.map((e) => [e.memoryId, e.action, e.at, e.relatedId])).toEqual([
      ['v1', 'created', 10, null],
      ['v2', 'created', 20, 'v1'],
      ['v1', 'superseded', 20, 'v2'],
      ['v2', 'updated', 30, null],
    ]);
    expect(history.entries[2]?.revision).toBe(2);
  });

  it('keeps the tombstone of an erased row (no record, no creation)', () => {
    const history = assembleHistory('m', ['m'], [undefined], [row('m', 'forgotten', 7, { actor: 'user' })]);
    expect(history.records).toEqual([]);
    expect(history.entries).toEqual([
      {
        memoryId: 'm',
        action: 'forgotten',
        at: 7,
        revision: null,
        actor: 'user',
        reason: null,
        relatedId: null,
        previousContent: null,
      },
    ]);
  });

  it("as a user sees it: another user's memory is unknown, another user's versions are left out", () => {
    const of = (id: string, at: number, userId: string | null): MemoryRecord => ({
      ...record(id, at),
      userId,
    });
    const chain = ['v1', 'v2', 'v3'];
    const records = [of('v1', 10, 'alice'), of('v2', 20, null), of('v3', 30, 'bob')];
    const rows = [row('v1', 'superseded', 20, { related_id: 'v2' }), row('v2', 'superseded', 30)];
    const forBob = assembleHistory('v2', chain, records, rows, 'bob');
    expect(forBob.chain).toEqual(['v2', 'v3']);
    expect(forBob.records.map((r) => r.id)).toEqual(['v2', 'v3']);
    expect(forBob.entries.map((e) => [e.memoryId, e.action])).toEqual([
      ['v2', 'created'],
      ['v3', 'created'],
      ['v2', 'superseded'],
    ]);
    expect(assembleHistory('v1', chain, records, rows, 'bob')).toEqual({
      id: 'v1',
      chain: ['v1'],
      records: [],
      entries: [],
    });
    // Without a scope, the whole agent's lineage.
    expect(assembleHistory('v2', chain, records, rows).chain).toEqual(chain);
  });

  it("as a user sees it: another user's erased memory is unknown, the user's own and the agent's keep their tombstones", () => {
    const tombstone = (id: string, userId: string | null): HistoryRow =>
      row(id, 'forgotten', 7, { actor: 'user', reason: 'asked', user_id: userId });
    const bobs = [tombstone('m', 'bob')];
    const empty = { id: 'm', chain: ['m'], records: [], entries: [] };
    expect(assembleHistory('m', ['m'], [undefined], bobs, 'alice')).toEqual(empty);
    expect(assembleHistory('m', ['m'], [undefined], bobs, 'bob').entries.map((e) => e.action)).toEqual([
      'forgotten',
    ]);
    expect(assembleHistory('m', ['m'], [undefined], bobs).entries).toHaveLength(1);
    const agents = [tombstone('m', null)];
    expect(assembleHistory('m', ['m'], [undefined], agents, 'alice').entries).toHaveLength(1);
    // Rows that never knew their user (written before the column): whole-agent calls only.
    const unknown = [row('m', 'forgotten', 7, { user_id: UNKNOWN_HISTORY_USER }), row('m', 'updated', 5)];
    expect(assembleHistory('m', ['m'], [undefined], unknown, 'bob')).toEqual(empty);
    expect(assembleHistory('m', ['m'], [undefined], unknown).entries).toHaveLength(2);
    // One row that names the user is enough; one that names another user hides the member.
    expect(goneMemberVisible([...unknown, tombstone('m', 'bob')], 'bob')).toBe(true);
    expect(goneMemberVisible([tombstone('m', 'bob'), tombstone('m', 'carol')], 'bob')).toBe(false);
  });

  it("leaves another user's erased predecessor out of a chain", () => {
    const chain = ['v1', 'v2'];
    const rows = [
      row('v1', 'superseded', 20, { related_id: 'v2', user_id: 'bob' }),
      row('v1', 'forgotten', 30, { user_id: 'bob' }),
    ];
    const v2 = { ...record('v2', 20), userId: null };
    const forAlice = assembleHistory('v2', chain, [undefined, v2], rows, 'alice');
    expect(forAlice.chain).toEqual(['v2']);
    expect(forAlice.entries.map((e) => [e.memoryId, e.action])).toEqual([['v2', 'created']]);
    expect(assembleHistory('v2', chain, [undefined, v2], rows, 'bob').chain).toEqual(chain);
  });

  it('is empty for an id the store never knew', () => {
    expect(assembleHistory('x', ['x'], [undefined], [])).toEqual({
      id: 'x',
      chain: ['x'],
      records: [],
      entries: [],
    });
  });
});
