/**
 * The conformance suite of the store port, export and import as a backup format: an export is one point-in-time
 * snapshot (a write loop on another instance never shows in it half-way); an import is all or nothing (a
 * truncated stream, an end record whose counts differ, a bad row: nothing is committed); every imported row passes
 * the facade's rules (agent, user and session ids in normal form, timestamps in JavaScript's `Date` range,
 * metadata a JSON object, vectors finite in float32); a row naming another agent than its header is refused, and
 * an import into a chosen agent says so; a stored row no reader can use never fails a read and fails the
 * integrity check.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  CONFORMANCE_PROFILE,
  type ConformanceOpen,
  type ConformancePort,
  type ConformancePortHarness,
  testClock,
} from './conformance-port.js';

type Cell = string | number | null;
type Row = Record<string, Cell>;
type Counts = {
  memories: number;
  events: number;
  cursors: number;
  skills: number;
  links: number;
  history: number;
};
/** An export record, as the suite writes and reads them. */
export type TransferRecord =
  | {
      type: 'header';
      format: 'engram-export';
      formatVersion: number;
      schemaVersion: number;
      embedder: { id: string; dimensions: number } | null;
      agentId: string | null;
      vectors: boolean;
    }
  | { type: 'memory'; row: Row; vectors?: (string | null)[] }
  | { type: 'event' | 'cursor' | 'skill' | 'link' | 'history'; row: Row }
  | { type: 'end'; counts: Counts };

/** The transfer slice of the port, as the suite uses it. */
interface TransferPort extends ConformancePort {
  exportRecords(options?: { agentId?: string; vectors?: boolean }): AsyncIterable<TransferRecord>;
  importRecords(
    records: AsyncIterable<TransferRecord> | Iterable<TransferRecord>,
    options?: { agentId?: string },
  ): Promise<{ imported: Counts; agentId?: string }>;
  checkIntegrity(): Promise<{ state: string; badRows?: number }>;
}

/** A harness whose store has the transfer slice, and raw SQL on its database for the damaged-row cases. */
export interface TransferHarness extends ConformancePortHarness {
  /** Runs one statement on the store's database behind the store's back (a row written by another tool). */
  corrupt?(sql: string): Promise<void>;
}

function header(
  agentId: string | null,
  embedder: { id: string; dimensions: number } | null = null,
): TransferRecord {
  return {
    type: 'header',
    format: 'engram-export',
    formatVersion: 1,
    schemaVersion: 1,
    embedder,
    agentId,
    vectors: embedder !== null,
  };
}

const zero = (): Counts => ({ memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 });

/** A valid memory row of `agent`, with `over` replacing columns. */
function memoryRow(id: string, agent: string, over: Row = {}): Row {
  return {
    id,
    agent_id: agent,
    kind: 'semantic',
    content: `memory ${id} about the harbour`,
    importance: 0.5,
    confidence: 1,
    tags: '[]',
    session_id: null,
    created_at: 1_000,
    updated_at: 1_000,
    lifecycle: 'active',
    embedding_state: 'pending',
    user_id: null,
    metadata: '{}',
    valid_from: 1_000,
    valid_to: null,
    ...over,
  };
}

/** A whole export: the header, the bodies, and an end record counting them. */
function file(head: TransferRecord, bodies: readonly TransferRecord[]): TransferRecord[] {
  const counts = zero();
  const key = {
    memory: 'memories',
    event: 'events',
    cursor: 'cursors',
    skill: 'skills',
    link: 'links',
    history: 'history',
  } as const;
  for (const b of bodies) if (b.type !== 'header' && b.type !== 'end') counts[key[b.type]] += 1;
  return [head, ...bodies, { type: 'end', counts }];
}

async function collect(records: AsyncIterable<TransferRecord>): Promise<TransferRecord[]> {
  const out: TransferRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

async function memoryCount(s: ConformancePort, agent: string): Promise<number> {
  return (await s.listMemories(agent, { limit: 1000 })).length;
}

/** Runs `fn` on a fresh store and its harness (closed afterwards). */
function withHarness(
  open: ConformanceOpen,
  fn: (s: TransferPort, h: TransferHarness) => Promise<void>,
  vectors = false,
): () => Promise<void> {
  return async () => {
    const clock = testClock(10_000);
    let n = 0;
    const h = (await open({
      now: clock.now,
      idFactory: () => `gen-${++n}`,
      vectors,
      forget: 'erase',
    })) as TransferHarness;
    try {
      await fn(h.store as TransferPort, h);
    } finally {
      await h.close();
    }
  };
}

function base64(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

/** Registers the export/import part of the suite. */
export function describeTransferConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: export and import as a backup`, () => {
    it(
      'an export taken while another worker supersedes facts is one moment: one active version per fact, no dangling reference',
      withHarness(open, async (s, h) => {
        const facts: { id: string; revision: number }[] = [];
        for (let i = 0; i < 20; i += 1) {
          const r = await s.insertMemory({ agentId: 'a', kind: 'fact', content: `fact ${i} version 0` });
          facts.push({ id: r.id, revision: r.revision });
        }
        // Filler, so the export reads several pages.
        for (let b = 0; b < 3; b += 1) {
          await s.insertMemories(
            Array.from({ length: 400 }, (_, i) => ({
              agentId: 'a',
              kind: 'semantic' as const,
              content: `filler ${b}-${i} note about the harbour`,
            })),
          );
        }
        const second = await h.openSecond();
        let stop = false;
        const loop = (async () => {
          for (let v = 1; !stop && v < 400; v += 1) {
            for (let i = 0; i < facts.length && !stop; i += 1) {
              const f = facts[i] as { id: string; revision: number };
              const out = await second.store.supersedeMemory('a', f.id, f.revision, {
                agentId: 'a',
                kind: 'fact',
                content: `fact ${i} version ${v}`,
              });
              facts[i] = { id: out.replacement.id, revision: out.replacement.revision };
            }
          }
        })();
        const records: TransferRecord[] = [];
        try {
          let n = 0;
          for await (const r of s.exportRecords()) {
            records.push(r);
            n += 1;
            // A slow consumer: the writer gets its turn many times during the stream.
            if (n % 25 === 0) await sleep(2);
          }
        } finally {
          stop = true;
          await loop;
          await second.close();
        }
        const memories = records.flatMap((r) => (r.type === 'memory' ? [r.row] : []));
        const ids = new Set(memories.map((m) => m.id));
        const activeFacts = memories.filter((m) => m.kind === 'fact' && m.lifecycle === 'active');
        expect(activeFacts).toHaveLength(20);
        for (const m of memories) if (m.superseded_by !== null) expect(ids.has(m.superseded_by)).toBe(true);
        for (const r of records) {
          if (r.type === 'history') expect(ids.has(r.row.memory_id as string)).toBe(true);
          if (r.type === 'link') {
            expect(ids.has(r.row.older_id as string)).toBe(true);
            expect(ids.has(r.row.newer_id as string)).toBe(true);
          }
        }
        const end = records.at(-1);
        expect(end?.type).toBe('end');
        if (end?.type === 'end') {
          expect(end.counts.memories).toBe(memories.length);
          expect(end.counts.history).toBe(records.filter((r) => r.type === 'history').length);
          expect(end.counts.links).toBe(records.filter((r) => r.type === 'link').length);
        }
      }),
      60_000,
    );

    it(
      'a truncated export (no end record) imports nothing; the whole file imports everything',
      withHarness(open, async (s) => {
        const bodies: TransferRecord[] = Array.from({ length: 600 }, (_, i) => ({
          type: 'memory',
          row: memoryRow(`m-${i}`, 'a', { content: `memory ${i} about the harbour` }),
        }));
        const whole = file(header('a'), bodies);
        const half = whole.slice(0, 301);
        await expect(s.importRecords(half)).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        expect(await memoryCount(s, 'a')).toBe(0);
        // A stream that fails part-way (the reader of a damaged file throws) leaves nothing either.
        async function* broken(): AsyncGenerator<TransferRecord> {
          yield* whole.slice(0, 400);
          throw new Error('the file could not be read further');
        }
        await expect(s.importRecords(broken())).rejects.toThrow();
        expect(await memoryCount(s, 'a')).toBe(0);
        expect((await s.importRecords(whole)).imported.memories).toBe(600);
        expect((await s.listMemories('a', { limit: 1000 })).length).toBe(600);
      }),
      60_000,
    );

    it(
      'an export whose history and link lines were removed is refused, end record unchanged; nothing imported',
      withHarness(open, async (s) => {
        const bodies: TransferRecord[] = [
          { type: 'memory', row: memoryRow('old', 'a', { kind: 'fact', content: 'the office is in Leeds' }) },
          { type: 'memory', row: memoryRow('new', 'a', { kind: 'fact', content: 'the office is in York' }) },
          {
            type: 'link',
            row: {
              agent_id: 'a',
              older_id: 'old',
              newer_id: 'new',
              kind: 'conflict',
              state: 'open',
              reason: 'contradiction',
              created_at: 1_000,
              resolved_at: null,
            },
          },
          {
            type: 'history',
            row: {
              agent_id: 'a',
              memory_id: 'new',
              action: 'conflictLinked',
              at: 1_000,
              revision: 1,
              actor: null,
              reason: null,
              related_id: 'old',
              content: null,
            },
          },
        ];
        const whole = file(header('a'), bodies);
        const stripped = whole.filter((r) => r.type !== 'link' && r.type !== 'history');
        await expect(s.importRecords(stripped)).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        expect(await memoryCount(s, 'a')).toBe(0);
        const summary = await s.importRecords(whole);
        expect(summary.imported).toMatchObject({ memories: 2, links: 1, history: 1 });
      }),
      60_000,
    );

    it(
      'a row naming another agent than its header is refused (nothing imported); an import into a chosen agent says so',
      withHarness(open, async (s) => {
        const mixed = file(header('alice'), [
          { type: 'memory', row: memoryRow('m-1', 'alice', { content: 'alice keeps the spare key' }) },
          { type: 'memory', row: memoryRow('m-2', 'bob', { content: 'alice secret moved to bob' }) },
        ]);
        await expect(s.importRecords(mixed)).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        expect(await memoryCount(s, 'alice')).toBe(0);
        expect(await memoryCount(s, 'bob')).toBe(0);
        // Into a chosen agent: every row lands there, and the summary names it.
        const alice = file(header('alice'), [
          { type: 'memory', row: memoryRow('m-3', 'alice', { content: 'alice likes tea' }) },
        ]);
        const summary = await s.importRecords(alice, { agentId: 'carol' });
        expect(summary.agentId).toBe('carol');
        expect(await memoryCount(s, 'carol')).toBe(1);
        expect(await memoryCount(s, 'alice')).toBe(0);
        // A file of several agents is not merged into one.
        const two = file(header(null), [
          { type: 'memory', row: memoryRow('m-4', 'dave', { content: 'dave likes rain' }) },
          { type: 'memory', row: memoryRow('m-5', 'erin', { content: 'erin likes sun' }) },
        ]);
        await expect(s.importRecords(two, { agentId: 'carol' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        expect(await memoryCount(s, 'carol')).toBe(1);
      }),
      60_000,
    );

    it(
      "an imported row passes the facade's rules: timestamps, metadata, user and session ids, validity (nothing imported)",
      withHarness(open, async (s) => {
        const bad: Row[] = [
          { created_at: 9e15 },
          { updated_at: 9e15 },
          { valid_from: 'yesterday' },
          { valid_to: 9e15 },
          { last_accessed_at: -9e15 },
          { metadata: 'not json{' },
          { metadata: '[1,2]' },
          { metadata: '"text"' },
          { user_id: 'alice ' },
          { user_id: 'al\u0007ice' },
          { user_id: 'cafe\u0301' },
          { session_id: ' s1' },
          { tags: '["no prefix"]' },
        ];
        for (const over of bad) {
          const records = file(header('a'), [
            { type: 'memory', row: memoryRow('ok-1', 'a', { content: 'a valid row first' }) },
            { type: 'memory', row: memoryRow('bad-1', 'a', over) },
          ]);
          await expect(s.importRecords(records), JSON.stringify(over)).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
          });
          expect(await memoryCount(s, 'a')).toBe(0);
        }
        const badEvent = file(header('a'), [
          {
            type: 'event',
            row: {
              agent_id: 'a',
              session_id: 's',
              seq: 1,
              type: 'message',
              role: 'user',
              content: 'hi',
              tool_name: null,
              metadata: '[1]',
              created_at: 1_000,
            },
          },
        ]);
        await expect(s.importRecords(badEvent)).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        // The facade refuses the same timestamp.
        await expect(
          s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'far future', createdAt: 9e15 }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
      }),
      60_000,
    );

    it(
      'a vector whose float32 norm overflows (components of 1e38) is refused on import and on insert',
      withHarness(
        open,
        async (s) => {
          const dims = CONFORMANCE_PROFILE.dimensions;
          const huge = new Float32Array(dims).fill(1e38);
          const records = file(header('a', { id: CONFORMANCE_PROFILE.id, dimensions: dims }), [
            {
              type: 'memory',
              row: memoryRow('v-1', 'a', { embedding_state: 'ready' }),
              vectors: [base64(huge)],
            },
          ]);
          await expect(s.importRecords(records)).rejects.toMatchObject({
            code: 'ENGRAM_STORE_VECTOR_INVALID',
          });
          expect(await memoryCount(s, 'a')).toBe(0);
          await expect(
            s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'huge', vector: huge }),
          ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_INVALID' });
        },
        true,
      ),
      60_000,
    );

    it(
      'a stored row no reader can use never fails a read, and fails the integrity check',
      withHarness(open, async (s, h) => {
        if (h.corrupt === undefined) throw new Error('this suite needs the harness to write raw rows');
        const good = await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'the harbour is calm' });
        const bad = await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'the harbour is rough' });
        expect((await s.checkIntegrity()).state).toBe('ok');
        await h.corrupt(
          `UPDATE memories SET created_at = 9000000000000000, metadata = '[1]' WHERE id = '${bad.id}'`,
        );
        const read = await s.getMemory('a', bad.id);
        expect(read?.content).toBe('the harbour is rough');
        expect((await s.listMemories('a', { limit: 10 })).map((r) => r.id).sort()).toEqual(
          [good.id, bad.id].sort(),
        );
        const hits = await s.searchLexical({ agentId: 'a', terms: ['harbour'], limit: 10 });
        expect(hits.hits.length).toBe(2);
        const integrity = await s.checkIntegrity();
        expect(integrity.state).toBe('failed');
        expect(integrity.badRows).toBe(1);
        // Writes stay allowed: the row can be forgotten, and the check passes again.
        expect(await s.deleteMemory('a', bad.id)).toBe(true);
        expect((await s.checkIntegrity()).state).toBe('ok');
      }),
      60_000,
    );

    it(
      'an export leaves out, and counts, a row its import would refuse',
      withHarness(open, async (s, h) => {
        if (h.corrupt === undefined) throw new Error('this suite needs the harness to write raw rows');
        await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'the harbour is calm' });
        const bad = await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'the harbour is rough' });
        // A creation time past what a Date can hold: the import's rules refuse it.
        await h.corrupt(`UPDATE memories SET created_at = 9000000000000000 WHERE id = '${bad.id}'`);
        const records = await collect(s.exportRecords({ agentId: 'a' }));
        expect(records.at(-1)).toMatchObject({ type: 'end', counts: { memories: 1 }, skipped: 1 });
        const kept = records.filter((r) => r.type === 'memory');
        expect(kept.map((r) => (r.type === 'memory' ? r.row.content : null))).toEqual([
          'the harbour is calm',
        ]);
      }),
      60_000,
    );

    it(
      'a position or cursor past what the store can add to reads as none: the session goes on',
      withHarness(open, async (s, h) => {
        if (h.corrupt === undefined) throw new Error('this suite needs the harness to write raw rows');
        const event = (seq: number, content: string) => ({
          seq,
          type: 'message' as const,
          role: 'user',
          content,
        });
        await s.appendEvents('a', 's1', [event(1, 'first'), event(2, 'second')]);
        await s.ingestBatch({
          agentId: 'a',
          sessionId: 's1',
          expectedCursor: 0,
          nextCursor: 1,
          memories: [],
        });
        // Another tool moves the second message and the cursor far past 2^40.
        await h.corrupt(`UPDATE events SET seq = 5000000000000000 WHERE seq = 2`);
        await h.corrupt(`UPDATE session_cursors SET cursor = 5000000000000000`);
        expect(await s.listSessions('a')).toEqual([{ sessionId: 's1', lastSeq: 1, cursor: 0 }]);
        expect((await s.listEventsAfter('a', 's1', 0, 10)).map((e) => e.seq)).toEqual([1]);
        expect(await s.appendEvents('a', 's1', [event(2, 'again')])).toMatchObject({
          appended: 1,
          lastSeq: 2,
        });
        await s.ingestBatch({
          agentId: 'a',
          sessionId: 's1',
          expectedCursor: 0,
          nextCursor: 2,
          memories: [],
        });
        expect(await s.listSessions('a')).toEqual([{ sessionId: 's1', lastSeq: 2, cursor: 2 }]);
        // The moved message stays (nothing is lost) and is counted as a row no reader can use.
        expect(await s.checkIntegrity()).toMatchObject({ state: 'failed', badRows: 1 });
      }),
      60_000,
    );

    it(
      'an export and its import round-trip every record type, counted in the end record',
      withHarness(open, async (s) => {
        const rows = file(header('a'), [
          { type: 'memory', row: memoryRow('r-1', 'a', { metadata: '{"b":1,"a":2}', user_id: 'u1' }) },
        ]);
        expect((await s.importRecords(rows)).imported.memories).toBe(1);
        const out = await collect(s.exportRecords({ agentId: 'a' }));
        expect(out.at(-1)).toMatchObject({ type: 'end', counts: { memories: 1, links: 0, history: 0 } });
      }),
      60_000,
    );
  });
}
