/**
 * Backups through the facade and the CLI: the store's export records, and the two choices an import makes
 * before the store checks and writes them — which agent the records go to (`agentId`: every record is
 * remapped to it, the header included) and when their decay clock starts (`keepAges`).
 *
 * A restore is not aged out: by default every imported memory's `updated_at` (its last write in this store,
 * where decay starts counting with the default `ageFrom: 'stored'`) is the import's time, as history ingested
 * with old timestamps ages from its ingestion; `created_at` and the rest stay as exported. The store does it
 * (`restartClocksAt`): a memory the target already holds keeps its stored clock and is compared without it, so
 * importing a file twice still finds every record unchanged.
 * `keepAges: true` keeps every field as exported (a byte-identical copy; old memories may then be archived by
 * the next maintenance pass).
 */
import { checkAgentId, checkAgentIdForm } from '@engram/contracts';
import type { ExportRecord, ExportRow } from '@engram/store';
import { invalidInput } from './errors.js';

export type {
  ExportCounts,
  ExportHeader,
  ExportRecord,
  ExportRow,
  ImportSummary,
} from '@engram/store';
export { formatExportLine, parseExportLine } from '@engram/store';

/** The choices of an import beyond the store's own checks. */
export interface ImportChoices {
  /**
   * Import every record into this agent: each row's `agent_id` and the header's `agentId` become it (an
   * export of one agent restored as another, or several agents merged into one).
   */
  readonly agentId?: string;
  /** Keep the exported ages (default false: imported memories start their decay clock at the import). */
  readonly keepAges?: boolean;
}

/** The store's import options for the choices at `now`: the decay clock restarts unless `keepAges`. */
export function importClock(choices: ImportChoices, now: number): { readonly restartClocksAt?: number } {
  return choices.keepAges === true ? {} : { restartClocksAt: now };
}

/** Checks the choices (typed `ENGRAM_MEMORY_INVALID_INPUT` errors). */
export function checkImportChoices(choices: unknown): ImportChoices {
  if (choices === undefined) return {};
  if (typeof choices !== 'object' || choices === null) throw invalidInput('options must be an object');
  const { agentId, keepAges } = choices as { agentId?: unknown; keepAges?: unknown };
  if (agentId !== undefined) {
    const problem = checkAgentId(agentId) ?? checkAgentIdForm(agentId);
    if (problem !== null) throw invalidInput(`agentId is invalid (${problem})`);
  }
  if (keepAges !== undefined && typeof keepAges !== 'boolean')
    throw invalidInput('keepAges must be a boolean');
  return {
    ...(agentId === undefined ? {} : { agentId: agentId as string }),
    ...(keepAges === undefined ? {} : { keepAges }),
  };
}

function withAgent(row: ExportRow, agentId: string | undefined): ExportRow {
  return agentId === undefined || !('agent_id' in row) ? row : { ...row, agent_id: agentId };
}

/**
 * The records as the store should import them: remapped to `choices.agentId` when given (the header
 * included). Lazy: one record in, one record out. The decay clock is the store's option ({@link importClock}).
 */
export async function* prepareImport(
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
  choices: ImportChoices,
): AsyncGenerator<ExportRecord> {
  const agentId = choices.agentId;
  for await (const record of records) {
    switch (record.type) {
      case 'header':
        yield agentId === undefined ? record : { ...record, agentId };
        break;
      case 'end':
        yield record;
        break;
      default:
        yield agentId === undefined ? record : { ...record, row: withAgent(record.row, agentId) };
    }
  }
}
