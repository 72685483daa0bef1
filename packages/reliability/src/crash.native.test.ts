/**
 * Crash safety: a child process writes in a loop and is killed with SIGKILL at seeded random points — from
 * outside (wherever it happens to be) and, through the fault-injecting driver, exactly between two statements
 * of a write transaction or right after a COMMIT; after every kill the file is reopened and checked
 * (integrity, FTS integrity, every reported write present, the operation in flight all or nothing, no ghost
 * index rows, no `ready` row without its vector) and the real embedding drain repairs every `pending` row.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createEmbeddingDrain } from '@engram/maintenance';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { type OpenDatabaseOptions, openDatabase, type SqliteDatabase } from '@engram/store-sqlite/raw';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CONSISTENT,
  type ConsistencyReport,
  checksum,
  consistencyProblems,
  createPrng,
  inspectDatabase,
  type LineChild,
  spawnChild,
  suiteSeed,
} from './harness.js';

const RUNS = 60;
/** Encrypted opens cost a key derivation each (PBKDF2, 256,000 iterations): fewer runs, every kill mode. */
const ENCRYPTED_RUNS = 8;
const SEED = suiteSeed(0x5eed_c7a5);
const MODES = ['onCommitted', 'onBegin', 'inTransaction', 'afterCommit'] as const;
type Mode = (typeof MODES)[number];

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
  items?: { id: string; revision: number; chunk?: number }[];
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
  fault?: string;
  statement?: string;
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

interface Campaign {
  /** Also the file name. */
  readonly label: string;
  readonly runs: number;
  readonly seed: number;
  /** Set: the file is encrypted (SQLCipher-compatible) with this key. */
  readonly key?: string;
  /** Set: the file keeps a quantised vector index (the children adopt it), which must stay in step too. */
  readonly quantization?: 'int8' | 'bit';
}

/** The raw-connection options for a campaign's file. */
function rawEncryption(key: string | undefined): OpenDatabaseOptions {
  return key === undefined ? {} : { encryption: { key: Buffer.from(key, 'utf8'), cipher: 'sqlcipher' } };
}

/** The drain's work left in a file: pending short memories, and the pending chunks of chunked ones. */
function pendingItems(path: string, key: string | undefined): number {
  const raw = openDatabase(path, rawEncryption(key));
  try {
    const row = raw
      .prepare(
        `SELECT (SELECT count(*) FROM memories WHERE embedding_state = 'pending' AND lifecycle = 'active'
                   AND chunk_count = 1)
              + (SELECT count(*) FROM memory_chunks c JOIN memories m ON m.rid = c.rid
                 WHERE m.embedding_state = 'pending' AND m.lifecycle = 'active' AND c.vec = 0) AS n`,
      )
      .get() as { n: number };
    return row.n;
  } finally {
    raw.close();
  }
}

/** How many vectors a fully embedded file holds, and how many of its memories are chunked. */
function vectorLayout(path: string, key: string | undefined): { expectedVectors: number; chunked: number } {
  const raw = openDatabase(path, rawEncryption(key));
  try {
    return raw
      .prepare(
        `SELECT (SELECT count(*) FROM memories WHERE chunk_count = 1)
              + (SELECT count(*) FROM memory_chunks) AS expectedVectors,
                (SELECT count(*) FROM memories WHERE chunk_count > 1) AS chunked`,
      )
      .get() as { expectedVectors: number; chunked: number };
  } finally {
    raw.close();
  }
}

/** Every byte of a database file and its WAL/SHM companions. */
function fileBytes(path: string): Buffer {
  return Buffer.concat(
    ['', '-wal', '-shm']
      .map((s) => path + s)
      .filter((p) => existsSync(p))
      .map((p) => readFileSync(p)),
  );
}

/** One campaign: `runs` children on one file, each killed, each followed by the checks and the drain. */
async function crashCampaign(campaign: Campaign): Promise<void> {
  const { label, runs: RUN_COUNT, key } = campaign;
  const path = join(dir, `${label}.db`);
  const embedder = createDeterministicEmbedder();
  const encryption = key === undefined ? {} : { encryption: { key } };
  createSqliteMemoryStore({
    path,
    embedding: embedder.profile,
    ...encryption,
    ...(campaign.quantization === undefined ? {} : { vectorIndex: { quantization: campaign.quantization } }),
  }).close();
  const prng = createPrng(campaign.seed);
  const inspect = (): ConsistencyReport => inspectDatabase(path, key);
  console.log(
    `[reliability:crash] ${label}: seed ${campaign.seed} (replay: ENGRAM_RELIABILITY_SEED=${SEED}), ${RUN_COUNT} runs`,
  );
  const model = new Map<string, RowModel>();
  const events: { agentId: string; session: string; from: number; to: number }[] = [];
  const cursors = new Map<string, number>();
  const totals = {
    runs: 0,
    killedBySignal: 0,
    writesVerified: 0,
    rowChecks: 0,
    eventRangesVerified: 0,
    killedInsideTransaction: 0,
    killedAfterCommit: 0,
    inFlightCommitted: 0,
    inFlightRolledBack: 0,
    pendingRepaired: 0,
  };
  /** Where the fault-driver kills landed: mode and the statement about to run (or just committed). */
  const killPoints: Record<string, number> = {};

  for (let run = 1; run <= RUN_COUNT; run += 1) {
    // Four kinds of kill, in turn: from outside on the k-th acknowledged write (C line) or as the k-th
    // operation begins (B line) — wherever the child happens to be —, and from inside the store (the fault
    // driver): before the m-th statement of a write transaction, or right after the m-th COMMIT.
    const mode = MODES[run % MODES.length] as Mode;
    const k = prng.between(0, 40);
    const fault =
      mode === 'inTransaction'
        ? `tx:${prng.between(1, 400)}`
        : mode === 'afterCommit'
          ? `commit:${prng.between(1, 30)}`
          : undefined;
    const args = [
      path,
      String(prng.int(2 ** 31)),
      String(run),
      fault ?? 'none',
      ...(key === undefined ? [] : [key]),
    ];
    const child: LineChild = spawnChild('crash-child', args);
    running = child;
    let seen = 0;
    let killed = false;
    let unreached = false;
    child.onLine((line) => {
      if (killed) return;
      let trigger = line.t === 'E';
      if (mode === 'onCommitted' || mode === 'onBegin') {
        trigger ||= k === 0 ? line.t === 'ready' : line.t === (mode === 'onBegin' ? 'B' : 'C') && ++seen >= k;
      } else if (line.t === 'C' && ++seen > 5_000) {
        // A fault point that is never reached would loop forever: stop and fail instead of timing out.
        unreached = true;
        trigger = true;
      }
      if (trigger) {
        killed = true;
        child.process.kill('SIGKILL');
      }
    });
    const exit = await child.exited;
    const lines = child.lines as unknown as Line[];
    const errors = lines.filter((l) => l.t === 'E');
    expect(errors, `run ${run}: the child reported an error; stderr: ${exit.stderr}`).toEqual([]);
    expect(unreached, `run ${run}: the fault point ${fault} was never reached`).toBe(false);
    expect(exit.signal, `run ${run}: the child ended without the kill; stderr: ${exit.stderr}`).toBe(
      'SIGKILL',
    );
    totals.killedBySignal += 1;
    const selfKills = lines.filter((l) => l.t === 'K');
    if (fault !== undefined) {
      // The child killed itself exactly once, at the fault point, and wrote nothing after it.
      expect(selfKills, `run ${run}: one kill at ${fault}`).toHaveLength(1);
      expect(lines.at(-1)?.t).toBe('K');
    } else {
      expect(selfKills).toEqual([]);
    }

    // Apply the committed (reported) writes to the model; remember the operation in flight, if any.
    const committed = new Set<number>();
    for (const line of lines) {
      if (line.t !== 'C') continue;
      committed.add(line.n as number);
      totals.writesVerified += 1;
      applyCommitted(line, model, events, cursors);
    }
    const lastBegin = [...lines].reverse().find((l) => l.t === 'B');
    const inFlight = lastBegin !== undefined && !committed.has(lastBegin.n as number) ? lastBegin : undefined;

    // 1. Raw inspection right after the crash: integrity, FTS integrity, no ghosts, ready ⇒ vector.
    expect(consistencyProblems(inspect()), `run ${run} after the kill`).toEqual(CONSISTENT);

    // 2. Every reported write is present; the operation in flight committed whole or not at all.
    const raw = openDatabase(path, rawEncryption(key));
    try {
      const byId = raw.prepare(
        'SELECT id, agent_id, revision, content, embedding_state FROM memories WHERE id = ?',
      );
      const flightIds = new Set<string>([
        ...(inFlight?.rows ?? []).map((r) => r.id),
        ...(inFlight?.items ?? []).map((r) => r.id),
        ...(inFlight?.id === undefined ? [] : [inFlight.id]),
      ]);
      if (fault !== undefined) {
        expect(inFlight, `run ${run}: a write was in flight at the fault point`).toBeDefined();
        const where = `${mode}: ${inFlight?.op} at ${selfKills[0]?.statement}`;
        killPoints[where] = (killPoints[where] ?? 0) + 1;
      }
      if (inFlight !== undefined) {
        const outcome = resolveInFlight(inFlight, {
          run,
          model,
          events,
          cursors,
          raw,
          read: (id) => byId.get(id) as StoredRow | undefined,
        });
        if (mode === 'inTransaction') {
          // Killed before COMMIT: not a trace of the operation.
          expect(outcome, `run ${run}: ${inFlight.op} killed inside its transaction`).toBe('rolledBack');
          totals.killedInsideTransaction += 1;
        } else if (mode === 'afterCommit') {
          // Killed after COMMIT, before the acknowledgement: all of it.
          expect(outcome, `run ${run}: ${inFlight.op} killed after its COMMIT`).toBe('committed');
          totals.killedAfterCommit += 1;
        } else if (outcome === 'committed') totals.inFlightCommitted += 1;
        else totals.inFlightRolledBack += 1;
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
      const countEvents = raw.prepare(
        'SELECT count(*) AS n FROM events WHERE agent_id = ? AND session_id = ? AND seq BETWEEN ? AND ?',
      );
      for (const e of events) {
        const n = (countEvents.get(e.agentId, e.session, e.from, e.to) as { n: number }).n;
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
    const store = createSqliteMemoryStore({ path, embedding: embedder.profile, ...encryption });
    try {
      // One drain item per pending short memory and per pending chunk of a pending chunked memory.
      const before = pendingItems(path, key);
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
    expect(consistencyProblems(inspect()), `run ${run} after the drain`).toEqual(CONSISTENT);
    totals.runs += 1;
  }

  const final = inspect();
  const summary = {
    campaign: label,
    seed: campaign.seed,
    ...totals,
    killPoints,
    finalRows: final.memories,
    finalVectors: final.vectors,
    finalEvents: final.events,
  };
  console.log(`[reliability:crash] ${JSON.stringify(summary)}`);
  expect(totals.runs).toBe(RUN_COUNT);
  // A quarter of the kills each landed inside a write transaction and between a COMMIT and its
  // acknowledgement — by construction, not by luck of scheduling.
  expect(totals.killedInsideTransaction).toBe(RUN_COUNT / MODES.length);
  expect(totals.killedAfterCommit).toBe(RUN_COUNT / MODES.length);
  expect(totals.writesVerified).toBeGreaterThan(RUN_COUNT);
  expect(totals.pendingRepaired).toBeGreaterThan(0);
  // Every memory ready after the drain: one vector per short memory and one per chunk of a long one, and the
  // children did write long (chunked) memories.
  const layout = vectorLayout(path, key);
  expect(layout.chunked).toBeGreaterThan(0);
  expect(final.vectors).toBe(layout.expectedVectors);
  // The child's text is in the plaintext file, and nowhere in the encrypted one (file, WAL, SHM).
  expect(fileBytes(path).includes(Buffer.from(`ingested event`, 'utf8'))).toBe(key === undefined);
}

describe('crash safety under SIGKILL', () => {
  it(`survives ${RUNS} seeded kills with every reported write present and the drain repairing what is pending`, async () => {
    // The plaintext file keeps a quantised vector index: its table is checked with the float one after each kill.
    await crashCampaign({ label: 'plaintext', runs: RUNS, seed: SEED, quantization: 'bit' });
  }, 600_000);

  it(`an encrypted file survives ${ENCRYPTED_RUNS} seeded kills the same way (hot WAL recovered under the key)`, async () => {
    await crashCampaign({
      label: 'encrypted',
      runs: ENCRYPTED_RUNS,
      seed: (SEED ^ 0x0e0c_0de5) >>> 0,
      key: 'crash-suite key',
    });
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
        // A chunk's vector alone does not make its memory ready (the raw check after the crash tells).
        if (m !== undefined && m.revision === item.revision && item.chunk === undefined) m.ready = true;
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

interface FlightContext {
  run: number;
  model: Map<string, RowModel>;
  events: { agentId: string; session: string; from: number; to: number }[];
  cursors: Map<string, number>;
  raw: SqliteDatabase;
  read: (id: string) => StoredRow | undefined;
}

/**
 * Checks the operation that was in flight at the kill: it committed entirely or not at all. Updates the model
 * to what the file holds and tells which of the two happened.
 */
function resolveInFlight(op: Line, ctx: FlightContext): 'committed' | 'rolledBack' {
  const { run, model, read } = ctx;
  const label = `run ${run}: in-flight ${op.op}`;
  switch (op.op) {
    case 'insert':
    case 'insertMany':
    case 'ingest': {
      const rows = op.rows ?? [];
      const present = rows.map((r) => read(r.id));
      const count = present.filter((r) => r !== undefined).length;
      expect([0, rows.length], `${label} is all or nothing`).toContain(count);
      rows.forEach((r, i) => {
        const stored = present[i];
        if (stored === undefined) return;
        expect({ revision: stored.revision, hash: checksum(stored.content) }).toEqual({
          revision: 1,
          hash: r.hash,
        });
        model.set(r.id, { agentId: r.agentId, revision: 1, hash: r.hash, deleted: false, ready: false });
      });
      if (op.op === 'ingest') {
        const stored = ctx.raw
          .prepare('SELECT cursor FROM session_cursors WHERE agent_id = ? AND session_id = ?')
          .get('agent-b', op.session) as { cursor: number } | undefined;
        // Rows and cursor move together or not at all.
        expect(stored?.cursor === op.cursor, `${label}: rows and cursor together`).toBe(
          count === rows.length,
        );
        if (stored?.cursor === op.cursor) ctx.cursors.set(op.session as string, op.cursor as number);
      }
      return count === 0 ? 'rolledBack' : 'committed';
    }
    case 'events': {
      const n = (
        ctx.raw
          .prepare(
            'SELECT count(*) AS n FROM events WHERE agent_id = ? AND session_id = ? AND seq BETWEEN ? AND ?',
          )
          .get(op.agentId, op.session, op.from, op.to) as { n: number }
      ).n;
      const span = (op.to as number) - (op.from as number) + 1;
      expect([0, span], `${label} is all or nothing`).toContain(n);
      if (n === 0) return 'rolledBack';
      ctx.events.push({
        agentId: op.agentId as string,
        session: op.session as string,
        from: op.from as number,
        to: op.to as number,
      });
      return 'committed';
    }
    case 'embed': {
      const items = op.items ?? [];
      let ready = 0;
      for (const item of items) {
        const stored = read(item.id);
        const m = model.get(item.id);
        expect(stored !== undefined && m !== undefined, `${label}: ${item.id} exists`).toBe(true);
        if (stored === undefined || m === undefined) continue;
        expect(stored.revision).toBe(m.revision);
        if (item.chunk !== undefined) {
          // A chunk item committed when its chunk has its vector; its memory is ready once all chunks are.
          const chunk = ctx.raw
            .prepare(
              'SELECT c.vec AS vec FROM memory_chunks c JOIN memories m ON m.rid = c.rid WHERE m.id = ? AND c.idx = ?',
            )
            .get(item.id, item.chunk) as { vec: number } | undefined;
          if (chunk?.vec === 1) ready += 1;
          if (stored.embedding_state === 'ready') m.ready = true;
          continue;
        }
        if (stored.embedding_state === 'ready') {
          ready += 1;
          m.ready = true;
        } else {
          expect(m.ready, `${item.id} lost its committed ready state`).toBe(false);
        }
      }
      // The child is the only writer: no outcome of the batch can be stale, so all or none are ready.
      expect([0, items.length], `${label} is all or nothing`).toContain(ready);
      return ready === 0 ? 'rolledBack' : 'committed';
    }
    case 'update':
    case 'retag':
    case 'delete': {
      const id = op.id as string;
      const m = model.get(id);
      const stored = read(id);
      expect(m, `${label}: ${id} is a row a child wrote`).toBeDefined();
      if (m === undefined) return 'rolledBack';
      if (op.op === 'delete') {
        if (stored === undefined) {
          m.deleted = true;
          return 'committed';
        }
        expect(stored.revision).toBe(m.revision);
        return 'rolledBack';
      }
      expect(stored, `${id} must survive an in-flight ${op.op}`).toBeDefined();
      if (stored === undefined) return 'rolledBack';
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
    default:
      throw new Error(`unknown op ${String(op.op)}`);
  }
}
