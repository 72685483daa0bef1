/**
 * Crash safety: a child process writes in a loop and is killed with SIGKILL at seeded random points; after
 * every kill the file is reopened and checked (integrity, FTS integrity, every reported write present, no
 * ghost index rows, no `ready` row without its vector) and the real embedding drain repairs every `pending` row.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createEmbeddingDrain } from '@engram/maintenance';
import { createSqliteMemoryStore, openDatabase } from '@engram/store';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CONSISTENT,
  checksum,
  consistencyProblems,
  createPrng,
  inspectDatabase,
  type LineChild,
  spawnChild,
  suiteSeed,
} from './harness.js';

const RUNS = 60;
const SEED = suiteSeed(0x5eed_c7a5);

interface RowModel {
  agentId: string;
  revision: number;
  hash: string;
  deleted: boolean;
  /** Committed `ready` (by the child or the drain) and no content change since. */
  ready: boolean;
}

interface Line {
  t: string;
  n?: number;
  op?: string;
  rows?: { id: string; agentId: string; hash: string }[];
  items?: { id: string; revision: number }[];
  id?: string;
  revision?: number;
  hash?: string;
  session?: string;
  agentId?: string;
  from?: number;
  to?: number;
  cursor?: number;
  ready?: number;
  stale?: number;
  code?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'engram-crash-'));
let running: LineChild | undefined;
afterAll(() => {
  // A failed or timed-out run must not leave its writer behind.
  if (running !== undefined && running.process.exitCode === null && running.process.signalCode === null) {
    running.process.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('crash safety under SIGKILL', () => {
  it(`survives ${RUNS} seeded kills with every reported write present and the drain repairing what is pending`, async () => {
    const path = join(dir, 'crash.db');
    const embedder = createDeterministicEmbedder();
    createSqliteMemoryStore({ path, embedding: embedder.profile }).close();
    const prng = createPrng(SEED);
    console.log(`[reliability:crash] seed ${SEED} (replay: ENGRAM_RELIABILITY_SEED=${SEED}), ${RUNS} runs`);
    const model = new Map<string, RowModel>();
    const events: { agentId: string; session: string; from: number; to: number }[] = [];
    const cursors = new Map<string, number>();
    const totals = {
      runs: 0,
      killedBySignal: 0,
      writesVerified: 0,
      rowChecks: 0,
      eventRangesVerified: 0,
      inFlightCommitted: 0,
      inFlightRolledBack: 0,
      pendingRepaired: 0,
    };

    for (let run = 1; run <= RUNS; run += 1) {
      // Kill on the k-th committed write (C line) or, a third of the time, as the k-th operation begins (B line).
      const onBegin = prng.chance(1 / 3);
      const k = prng.between(0, 40);
      const child: LineChild = spawnChild('crash-child', [path, String(prng.int(2 ** 31)), String(run)]);
      running = child;
      let seen = 0;
      let killed = false;
      child.onLine((line) => {
        if (killed) return;
        const trigger = k === 0 ? line.t === 'ready' : line.t === (onBegin ? 'B' : 'C') && ++seen >= k;
        if (trigger || line.t === 'E') {
          killed = true;
          child.process.kill('SIGKILL');
        }
      });
      const exit = await child.exited;
      const lines = child.lines as unknown as Line[];
      const errors = lines.filter((l) => l.t === 'E');
      expect(errors, `run ${run}: the child reported an error; stderr: ${exit.stderr}`).toEqual([]);
      expect(exit.signal, `run ${run}: the child ended without the kill; stderr: ${exit.stderr}`).toBe(
        'SIGKILL',
      );
      totals.killedBySignal += 1;

      // Apply the committed (reported) writes to the model; remember the operation in flight, if any.
      const committed = new Set<number>();
      for (const line of lines) {
        if (line.t !== 'C') continue;
        committed.add(line.n as number);
        totals.writesVerified += 1;
        applyCommitted(line, model, events, cursors);
      }
      const lastBegin = [...lines].reverse().find((l) => l.t === 'B');
      const inFlight =
        lastBegin !== undefined && !committed.has(lastBegin.n as number) ? lastBegin : undefined;

      // 1. Raw inspection right after the crash: integrity, FTS integrity, no ghosts, ready ⇒ vector.
      expect(consistencyProblems(inspectDatabase(path)), `run ${run} after the kill`).toEqual(CONSISTENT);

      // 2. Every reported write is present (the operation in flight may or may not have committed).
      const raw = openDatabase(path);
      try {
        const byId = raw.prepare(
          'SELECT id, agent_id, revision, content, embedding_state FROM memories WHERE id = ?',
        );
        const flightIds = new Set<string>([
          ...(inFlight?.rows ?? []).map((r) => r.id),
          ...(inFlight?.items ?? []).map((r) => r.id),
          ...(inFlight?.id === undefined ? [] : [inFlight.id]),
        ]);
        if (inFlight !== undefined) {
          const outcome = resolveInFlight(inFlight, model, (id) => byId.get(id) as StoredRow | undefined);
          if (outcome === 'committed') totals.inFlightCommitted += 1;
          else if (outcome === 'rolledBack') totals.inFlightRolledBack += 1;
          if (inFlight.op === 'events') {
            const n = (
              raw
                .prepare(
                  'SELECT count(*) AS n FROM events WHERE agent_id = ? AND session_id = ? AND seq BETWEEN ? AND ?',
                )
                .get(inFlight.agentId, inFlight.session, inFlight.from, inFlight.to) as { n: number }
            ).n;
            const span = (inFlight.to as number) - (inFlight.from as number) + 1;
            expect([0, span], `run ${run}: the in-flight event batch is all or nothing`).toContain(n);
            if (n === 0) totals.inFlightRolledBack += 1;
            else totals.inFlightCommitted += 1;
            if (n === span) {
              events.push({
                agentId: inFlight.agentId as string,
                session: inFlight.session as string,
                from: inFlight.from as number,
                to: inFlight.to as number,
              });
            }
          }
          if (inFlight.op === 'ingest') {
            const stored = raw
              .prepare('SELECT cursor FROM session_cursors WHERE agent_id = ? AND session_id = ?')
              .get('agent-b', inFlight.session) as { cursor: number } | undefined;
            const rowsThere = (inFlight.rows ?? []).filter((r) => byId.get(r.id) !== undefined).length;
            // Rows and cursor move together or not at all.
            expect(stored?.cursor === inFlight.cursor, `run ${run}: ingest atomicity`).toBe(
              rowsThere === (inFlight.rows ?? []).length,
            );
            if (stored?.cursor === inFlight.cursor)
              cursors.set(inFlight.session as string, inFlight.cursor as number);
          }
        }
        for (const [id, m] of model) {
          if (flightIds.has(id)) continue;
          const row = byId.get(id) as StoredRow | undefined;
          if (m.deleted) {
            expect(row, `run ${run}: ${id} was deleted`).toBeUndefined();
            continue;
          }
          expect(row, `run ${run}: ${id} was reported committed`).toBeDefined();
          expect({
            agent: row?.agent_id,
            revision: row?.revision,
            hash: checksum(row?.content ?? ''),
          }).toEqual({
            agent: m.agentId,
            revision: m.revision,
            hash: m.hash,
          });
          if (m.ready) expect(row?.embedding_state, `run ${run}: ${id} was committed ready`).toBe('ready');
          totals.rowChecks += 1;
        }
        for (const e of events) {
          const n = (
            raw
              .prepare(
                'SELECT count(*) AS n FROM events WHERE agent_id = ? AND session_id = ? AND seq BETWEEN ? AND ?',
              )
              .get(e.agentId, e.session, e.from, e.to) as { n: number }
          ).n;
          expect(n, `run ${run}: events ${e.session}#${e.from}-${e.to}`).toBe(e.to - e.from + 1);
          totals.eventRangesVerified += 1;
        }
        for (const [session, cursor] of cursors) {
          const stored = raw
            .prepare('SELECT cursor FROM session_cursors WHERE agent_id = ? AND session_id = ?')
            .get('agent-b', session) as { cursor: number } | undefined;
          expect(stored?.cursor, `run ${run}: cursor of ${session}`).toBe(cursor);
        }
      } finally {
        raw.close();
      }

      // 3. The real drain repairs every row left pending: backlog 0, every active row ready.
      const store = createSqliteMemoryStore({ path, embedding: embedder.profile });
      try {
        const before = (await store.countEmbeddingBacklog()).total;
        const drain = createEmbeddingDrain({ store, embedder, batchSize: 64, maxBatchesPerRun: 10_000 });
        const result = await drain.run();
        expect(result).toMatchObject({ outcome: 'completed', backlog: 0 });
        expect(result.transitions).toEqual({ ready: before, error: 0, ftsOnly: 0, stale: 0 });
        totals.pendingRepaired += result.transitions.ready;
        const health = await store.health();
        expect(health.ok && health.health.byEmbeddingState).toEqual({
          pending: 0,
          ready: health.ok ? health.health.totals.memories : -1,
          error: 0,
          ftsOnly: 0,
        });
      } finally {
        store.close();
      }
      for (const m of model.values()) if (!m.deleted) m.ready = true;
      expect(consistencyProblems(inspectDatabase(path)), `run ${run} after the drain`).toEqual(CONSISTENT);
      totals.runs += 1;
    }

    const final = inspectDatabase(path);
    const summary = {
      seed: SEED,
      ...totals,
      finalRows: final.memories,
      finalVectors: final.vectors,
      finalEvents: final.events,
    };
    console.log(`[reliability:crash] ${JSON.stringify(summary)}`);
    expect(totals.runs).toBe(RUNS);
    expect(totals.writesVerified).toBeGreaterThan(RUNS);
    expect(totals.pendingRepaired).toBeGreaterThan(0);
    expect(final.vectors).toBe(final.memories);
  }, 600_000);
});

interface StoredRow {
  id: string;
  agent_id: string;
  revision: number;
  content: string;
  embedding_state: string;
}

function applyCommitted(
  line: Line,
  model: Map<string, RowModel>,
  events: { agentId: string; session: string; from: number; to: number }[],
  cursors: Map<string, number>,
): void {
  switch (line.op) {
    case 'insert':
    case 'insertMany':
    case 'ingest':
      for (const r of line.rows ?? []) {
        model.set(r.id, { agentId: r.agentId, revision: 1, hash: r.hash, deleted: false, ready: false });
      }
      if (line.op === 'ingest') cursors.set(line.session as string, line.cursor as number);
      return;
    case 'events':
      events.push({
        agentId: line.agentId as string,
        session: line.session as string,
        from: line.from as number,
        to: line.to as number,
      });
      return;
    case 'embed':
      for (const item of line.items ?? []) {
        const m = model.get(item.id);
        if (m !== undefined && m.revision === item.revision) m.ready = true;
      }
      return;
    case 'update': {
      const m = model.get(line.id as string);
      if (m !== undefined) {
        m.revision = line.revision as number;
        m.hash = line.hash as string;
        m.ready = false;
      }
      return;
    }
    case 'retag': {
      const m = model.get(line.id as string);
      if (m !== undefined) m.revision = line.revision as number;
      return;
    }
    case 'delete': {
      const m = model.get(line.id as string);
      if (m !== undefined) m.deleted = true;
      return;
    }
    default:
      throw new Error(`unknown op ${String(line.op)}`);
  }
}

/**
 * Checks the operation that was in flight at the kill: it committed entirely or not at all. Updates the model
 * to what the file holds and tells which of the two happened (`none` when the op leaves no trace to tell).
 */
function resolveInFlight(
  op: Line,
  model: Map<string, RowModel>,
  read: (id: string) => StoredRow | undefined,
): 'committed' | 'rolledBack' | 'none' {
  switch (op.op) {
    case 'insert':
    case 'insertMany':
    case 'ingest': {
      const rows = op.rows ?? [];
      const present = rows.map((r) => read(r.id));
      const count = present.filter((r) => r !== undefined).length;
      expect([0, rows.length], `in-flight ${op.op} is all or nothing`).toContain(count);
      rows.forEach((r, i) => {
        const stored = present[i];
        if (stored === undefined) return;
        expect({ revision: stored.revision, hash: checksum(stored.content) }).toEqual({
          revision: 1,
          hash: r.hash,
        });
        model.set(r.id, { agentId: r.agentId, revision: 1, hash: r.hash, deleted: false, ready: false });
      });
      return count === 0 ? 'rolledBack' : 'committed';
    }
    case 'embed': {
      let ready = 0;
      for (const item of op.items ?? []) {
        const stored = read(item.id);
        const m = model.get(item.id);
        if (stored === undefined || m === undefined) continue;
        expect(stored.revision).toBe(m.revision);
        if (stored.embedding_state === 'ready') {
          ready += 1;
          m.ready = true;
        } else {
          expect(m.ready, `${item.id} lost its committed ready state`).toBe(false);
        }
      }
      return ready === 0 ? 'rolledBack' : 'committed';
    }
    case 'update':
    case 'retag':
    case 'delete': {
      const id = op.id as string;
      const m = model.get(id);
      const stored = read(id);
      if (m === undefined) return 'none';
      if (op.op === 'delete') {
        if (stored === undefined) {
          m.deleted = true;
          return 'committed';
        }
        expect(stored.revision).toBe(m.revision);
        return 'rolledBack';
      }
      expect(stored, `${id} must survive an in-flight ${op.op}`).toBeDefined();
      if (stored === undefined) return 'none';
      if (stored.revision === m.revision) {
        expect(checksum(stored.content)).toBe(m.hash);
        return 'rolledBack';
      }
      expect(stored.revision).toBe(op.revision);
      if (op.op === 'update') {
        expect(checksum(stored.content)).toBe(op.hash);
        m.hash = op.hash as string;
        m.ready = false;
      }
      m.revision = stored.revision;
      return 'committed';
    }
    case 'events':
      return 'none';
    default:
      throw new Error(`unknown op ${String(op.op)}`);
  }
}
