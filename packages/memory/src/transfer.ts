/**
 * Backups through the facade and the CLI: the store's export records, and the two choices an import makes
 * before the store checks and writes them — which agent the records go to (`agentId`: every record is
 * remapped to it, the header included) and when their decay clock starts (`keepAges`).
 *
 * A restore is not aged out: by default every imported memory's `updated_at` (its last write in this store,
 * where decay starts counting with the default `ageFrom: 'stored'`) is the import's time, as history ingested
 * with old timestamps ages from its ingestion; `created_at` and the rest stay as exported. A memory the target
 * already holds keeps its stored clock, so importing a file twice still finds every record unchanged.
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

/** What {@link prepareImport} needs besides the choices. */
export interface ImportContext {
  /** The import's time (epoch ms): the decay clock of every imported memory unless `keepAges`. */
  readonly now: number;
  /**
   * The stored `updatedAt` of a memory the target already holds (null when it holds none), so a re-import
   * keeps that row's clock and stays idempotent. Omitted: the target holds nothing yet.
   */
  readonly storedClock?: (agentId: string, id: string) => Promise<number | null>;
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
 * The records as the store should import them: remapped to `choices.agentId` when given, and (unless
 * `keepAges`) each memory's decay clock started at `context.now`. Lazy: one record in, one record out.
 */
export async function* prepareImport(
  records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
  choices: ImportChoices,
  context: ImportContext,
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
      case 'memory': {
        let row = withAgent(record.row, agentId);
        if (choices.keepAges !== true && typeof row.id === 'string' && typeof row.agent_id === 'string') {
          const stored = (await context.storedClock?.(row.agent_id, row.id)) ?? null;
          row = { ...row, updated_at: stored ?? context.now };
        }
        yield { ...record, row };
        break;
      }
      default:
        yield agentId === undefined ? record : { ...record, row: withAgent(record.row, agentId) };
    }
  }
}
