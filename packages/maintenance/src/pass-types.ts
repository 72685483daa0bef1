/** The options and the answer of one maintenance pass. */
import type { MaintenancePassReport } from '@engram/contracts';
import type { MemoryRecord } from '@engram/store';
import type { InvalidModelOutput } from './model-output.js';

/** Options of one pass. */
export interface MaintenancePassOptions {
  readonly signal?: AbortSignal;
  /**
   * Run the heavy phase even inside its cool-down, and take over the agent's maintenance lease when another
   * worker holds it (a pass whose process died; the result's `details.tookOverLease` says so).
   */
  readonly force?: boolean;
  /**
   * Change nothing: the cheap phase lists the rows decay would archive (`details.plan`), the heavy phase is
   * not run (it needs the model's answers), no repair or pruning is written, the scan cursor and the
   * cool-down do not move, and the observer is not told (a dry run is not a pass).
   */
  readonly dryRun?: boolean;
  /**
   * A pass for one user of the agent: it touches that user's memories only — decay archival, merges,
   * reflection and persona of that user's group (the persona reads the agent's own facts as context), and
   * the contradictions between that user's memories. Without it the pass covers the whole agent, every user
   * group apart. A malformed id rejects with `ENGRAM_MAINTENANCE_INVALID_INPUT` before anything runs.
   */
  readonly userId?: string;
}

/** One row a dry run would archive. */
export interface PlannedArchive {
  readonly id: string;
  readonly kind: MemoryRecord['kind'];
  readonly importance: number;
  /** Age used by decay, in whole days. */
  readonly ageDays: number;
  readonly score: number;
}

/** What a pass did beyond its report (or, on a dry run, would do). */
export interface MaintenancePassDetails {
  readonly dryRun: boolean;
  /**
   * Decay archival: rows archived (or, on a dry run, that would be), rows scanned, and whether the scan
   * reached the end of the agent's rows. `complete: false` means `maxScanPerPass` stopped it: more rows may
   * qualify and the next pass continues where this one stopped — nothing is capped silently.
   */
  readonly archive: { readonly archived: number; readonly scanned: number; readonly complete: boolean };
  /** On a dry run, the rows decay would archive (at most `maxScanPerPass`); empty otherwise. */
  readonly plan: readonly PlannedArchive[];
  /** Rows the heavy phase wrote, how many were embedded in this pass, and how many are still `pending`. */
  readonly written: { readonly rows: number; readonly embedded: number; readonly pending: number };
  /** Invalid model answers: which schema and which field failed, and how (at most 16; never content). */
  readonly invalidOutputs: readonly InvalidModelOutput[];
  /** Present (true) when a forced pass took the agent's maintenance lease over from another holder. */
  readonly tookOverLease?: true;
}

/**
 * The answer of one pass: its report, or why nothing was done — `busy` when a pass for the agent was already
 * running in the same runner, `claimed` when another worker (runner or process) holds the agent's maintenance lease.
 */
export type MaintenancePassResult =
  | { readonly skipped: 'busy' | 'claimed'; readonly report: null; readonly details?: null }
  | {
      readonly skipped: null;
      readonly report: MaintenancePassReport;
      readonly details: MaintenancePassDetails;
    };
