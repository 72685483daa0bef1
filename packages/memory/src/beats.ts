/**
 * Process beats: a process that opens a store for writing publishes its content-free diagnostics snapshot into
 * the store (the port's `publishProcessBeat`) so that a health page served by any process — a read-only
 * `engram serve` included — shows every live process's figures. A beat is written at most every
 * `intervalMs` (default 2 s), only when the figures changed since the last one, and at least every
 * `keepaliveMs` (5 intervals) while the process lives; its row expires `ttlMs` (3 keepalives and one interval)
 * after its last beat, so a process that was killed disappears within that time. The timer is `unref()`ed; a
 * clean close deletes the row. Publishing never fails the process: an error is dropped and retried next beat.
 */
import { randomBytes } from 'node:crypto';
import {
  type DiagnosticsCollector,
  type DiagnosticsSnapshot,
  mergeSnapshots,
  type ProcessBeatDto,
  type ProcessesDto,
  processSnapshotSchema,
} from '@engram/diagnostics';
import type { ProcessBeatSlice } from '@engram/store';
import { EngramMemoryError } from './errors.js';

/** The environment variable that sets the beat interval in ms (tests use a short one). */
export const PROCESS_BEAT_ENV_VAR = 'ENGRAM_PROCESS_BEAT_MS';
/** The default beat interval: 2 s. */
export const DEFAULT_PROCESS_BEAT_MS = 2000;
const MIN_BEAT_MS = 50;
const MAX_BEAT_MS = 60_000;

/** The option of the engine: `false` publishes nothing; `intervalMs` sets the interval (50 ms to 60 s). */
export type ProcessBeatOption = false | { readonly intervalMs?: number };

/** How often a process beats and when its row expires. */
export interface ProcessBeatSettings {
  readonly intervalMs: number;
  readonly keepaliveMs: number;
  readonly ttlMs: number;
}

function checkedInterval(value: unknown, name: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < MIN_BEAT_MS || (value as number) > MAX_BEAT_MS) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_INVALID_CONFIG',
      `${name} must be an integer from ${MIN_BEAT_MS} to ${MAX_BEAT_MS} (milliseconds)`,
    );
  }
  return value as number;
}

/** The settings of an engine's beats (null: none published), from the option, else the environment. */
export function processBeatSettings(
  option: ProcessBeatOption | undefined,
  env: Readonly<Record<string, string | undefined>> | undefined,
): ProcessBeatSettings | null {
  if (option === false) return null;
  let intervalMs = DEFAULT_PROCESS_BEAT_MS;
  if (option?.intervalMs !== undefined) {
    intervalMs = checkedInterval(option.intervalMs, 'processBeat.intervalMs');
  } else {
    const raw = env?.[PROCESS_BEAT_ENV_VAR];
    if (raw !== undefined && raw !== '') {
      intervalMs = checkedInterval(/^\d{1,6}$/.test(raw) ? Number(raw) : Number.NaN, PROCESS_BEAT_ENV_VAR);
    }
  }
  const keepaliveMs = intervalMs * 5;
  return { intervalMs, keepaliveMs, ttlMs: keepaliveMs * 3 + intervalMs };
}

/** The snapshot type the store port takes (content-free JSON). */
type StoredSnapshot = Parameters<Required<ProcessBeatSlice>['publishProcessBeat']>[0]['snapshot'];

type BeatStore = Required<Pick<ProcessBeatSlice, 'publishProcessBeat' | 'removeProcessBeat'>> &
  Pick<ProcessBeatSlice, 'listProcessBeats'>;

/** What changes between beats when something happened (the statements the beats themselves run aside). */
function changeKey(snapshot: DiagnosticsSnapshot): string {
  const { store: _statements, ...process } = snapshot.process;
  return JSON.stringify([snapshot.agent, process]);
}

/** This process's identity and, when it writes, its running publisher. */
export interface ProcessBeats {
  readonly processId: string;
  readonly startedAt: number;
  /** Every live process using the store, this one included (its figures live), and the totals. */
  read(): Promise<{ readonly processes: ProcessesDto; readonly totals: DiagnosticsSnapshot }>;
  /** Stops the timer, waits for a beat in flight and deletes this process's row (idempotent; never rejects). */
  stop(): Promise<void>;
}

/**
 * Starts publishing `collector`'s snapshot into `store` (when `settings` is not null and `writes`); always
 * answers the reader of every process's beats.
 */
export function startProcessBeats(
  store: BeatStore,
  collector: DiagnosticsCollector,
  settings: ProcessBeatSettings | null,
  writes: boolean,
): ProcessBeats {
  const processId = randomBytes(16).toString('hex');
  const startedAt = Date.now();
  let lastKey = '';
  let lastBeatAt = 0;
  let inFlight: Promise<void> | null = null;
  let stopped = false;
  let published = false;

  const tick = (): void => {
    if (stopped || inFlight !== null || settings === null) return;
    const snapshot = collector.snapshot();
    const key = changeKey(snapshot);
    const now = Date.now();
    if (key === lastKey && now - lastBeatAt < settings.keepaliveMs) return;
    inFlight = store
      .publishProcessBeat({
        processId,
        startedAt,
        ttlMs: settings.ttlMs,
        snapshot: snapshot as unknown as StoredSnapshot,
      })
      .then(
        () => {
          lastKey = key;
          lastBeatAt = now;
          published = true;
        },
        () => {
          // Dropped: the next tick retries (a busy file, a read-only store); the process carries on.
        },
      )
      .finally(() => {
        inFlight = null;
      });
  };
  const timer = settings !== null && writes ? setInterval(tick, settings.intervalMs) : null;
  timer?.unref();

  return {
    processId,
    startedAt,
    async read() {
      const now = Date.now();
      const self: ProcessBeatDto = {
        id: processId,
        self: true,
        startedAt,
        beatAt: now,
        runtime: collector.snapshot(),
      };
      const list: ProcessBeatDto[] = [self];
      let skipped = 0;
      let rows: Awaited<ReturnType<NonNullable<BeatStore['listProcessBeats']>>> = { beats: [], skipped: 0 };
      try {
        if (store.listProcessBeats !== undefined) rows = await store.listProcessBeats();
      } catch {
        // The page still shows this process; the others are missing until the store answers again.
      }
      skipped += rows.skipped;
      for (const beat of rows.beats) {
        if (beat.processId === processId) continue;
        // A reader never throws on what it reads: a row that is not a whole-process snapshot is skipped.
        const parsed = processSnapshotSchema.safeParse(beat.snapshot);
        if (!parsed.success) {
          skipped += 1;
          continue;
        }
        list.push({
          id: beat.processId,
          self: false,
          startedAt: beat.startedAt,
          beatAt: beat.beatAt,
          runtime: parsed.data,
        });
      }
      list.sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
      return {
        processes: { list, skipped },
        totals: mergeSnapshots(
          list.map((p) => p.runtime),
          now,
        ),
      };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (timer !== null) clearInterval(timer);
      await inFlight;
      if (!published) return;
      await store.removeProcessBeat(processId).catch(() => undefined);
    },
  };
}
