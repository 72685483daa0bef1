/**
 * Support for the maintenance suites kept here because they are about SQLite itself (a second connection to
 * one file, lease expiry on the store's clock, rows broken through a raw connection, the file's bytes):
 * a real SQLite store on a temporary file, manual time, and a scripted model. (The same helpers as in
 * @engram/maintenance's own tests, whose store is PostgreSQL on PGlite.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Timers } from '@engram/contracts';
import { createDeterministicEmbedder, DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import type { Clock, ModelMessage, ModelPort } from '@engram/maintenance';
import type { StoreObserver } from '@engram/store';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
/** A real SQLite store on a temporary file, bound to the deterministic embedder's profile. */
export interface TempStore {
  readonly store: SqliteMemoryStore;
  /** The database file (for a second, raw connection in integrity tests). */
  readonly path: string;
  readonly embedder: ReturnType<typeof createDeterministicEmbedder>;
  close(): void;
}

/** Opens a real store in a fresh temporary directory (native tiers only). */
export function openTempStore(
  options: {
    readonly observer?: StoreObserver;
    readonly now?: () => number;
    readonly withProfile?: boolean;
  } = {},
): TempStore {
  const dir = mkdtempSync(join(tmpdir(), 'engram-maint-'));
  const path = join(dir, 'memory.db');
  const store = createSqliteMemoryStore({
    path,
    embedding: options.withProfile === false ? null : DETERMINISTIC_PROFILE,
    ...(options.observer === undefined ? {} : { observer: options.observer }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return {
    store,
    path,
    embedder: createDeterministicEmbedder(),
    close(): void {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Manual time for tests: a clock and timers that only move when `advance` is called. Never sleeps. */
export interface FakeTime {
  readonly clock: Clock;
  readonly timers: Timers;
  /** Moves time forward, firing due timers in order (each sees `now` at its due time). */
  advance(ms: number): void;
  /** Timers not yet fired or cleared. */
  pending(): number;
}

/** Creates manual time starting at `start` (epoch ms). */
export function createFakeTime(start = 1_700_000_000_000): FakeTime {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    clock: { now: () => now },
    timers: {
      setTimeout(fn: () => void, ms: number): unknown {
        seq += 1;
        timers.set(seq, { at: now + Math.max(0, ms), fn });
        return seq;
      },
      clearTimeout(handle: unknown): void {
        timers.delete(handle as number);
      },
    },
    advance(ms: number): void {
      const target = now + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) {
          if (entry[1].at <= target && (next === undefined || entry[1].at < next[1].at)) next = entry;
        }
        if (next === undefined) break;
        timers.delete(next[0]);
        now = next[1].at;
        next[1].fn();
      }
      now = target;
    },
    pending: () => timers.size,
  };
}

/** Lets pending promise callbacks run (a macrotask turn, not a sleep). */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** One scripted answer: canned text, or a function of the request (for answers that depend on ids). */
export type ScriptedAnswer =
  | string
  | ((request: {
      readonly messages: readonly ModelMessage[];
      readonly schemaName: string;
    }) => string | Promise<string>);

/** A recorded call of the scripted model. */
export interface ScriptedCall {
  readonly schemaName: string;
  readonly messages: readonly ModelMessage[];
}

/**
 * A scripted model (a test double of an external LLM service): answers by schema name from queues of canned
 * JSON, records every call, and rejects when its script for a schema runs out.
 */
export interface ScriptedModel extends ModelPort {
  readonly calls: ScriptedCall[];
  push(schemaName: string, ...answers: ScriptedAnswer[]): void;
}

/** Creates a scripted model. */
export function createScriptedModel(script: Record<string, ScriptedAnswer[]> = {}): ScriptedModel {
  const queues = new Map<string, ScriptedAnswer[]>(Object.entries(script).map(([k, v]) => [k, [...v]]));
  const calls: ScriptedCall[] = [];
  return {
    id: 'scripted-model',
    calls,
    push(schemaName, ...answers) {
      const q = queues.get(schemaName) ?? [];
      q.push(...answers);
      queues.set(schemaName, q);
    },
    async generate(request) {
      const schemaName = request.jsonSchema.name;
      calls.push({ schemaName, messages: request.messages });
      const next = queues.get(schemaName)?.shift();
      if (next === undefined) throw new Error('scripted model: no answer left');
      return {
        text: typeof next === 'string' ? next : await next({ messages: request.messages, schemaName }),
      };
    },
  };
}
