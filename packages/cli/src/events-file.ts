/**
 * The JSONL events file of `engram ingest`: one event per line, validated with zod. Pure: the caller reads
 * the file. Errors name the line and the field, never the line's content.
 */
import { checkAgentIdForm, checkTimestamp, isValidAgentId, MAX_TIMESTAMP_MS } from '@engram/contracts';
import type { EventInput } from '@engram/memory/compose';
import { z } from 'zod';
import { EngramCliError } from './errors.js';

/** Most events one file may hold. */
export const MAX_EVENTS_PER_FILE = 1_000_000;

/** The events-file format version this CLI reads (an optional `schema_version` field on any line). */
export const EVENTS_FILE_SCHEMA_VERSION = 1;

/** The contracts' id rule plus its normal-form rule: what the store accepts and what keeps agents apart. */
const idSchema = z.string().refine((v) => isValidAgentId(v) && checkAgentIdForm(v) === null);

const lineSchema = z.strictObject({
  schema_version: z.literal(EVENTS_FILE_SCHEMA_VERSION).optional(),
  agentId: idSchema.optional(),
  sessionId: idSchema.optional(),
  seq: z.int().min(1).max(2_147_483_647),
  type: z.enum(['message', 'tool_call', 'tool_result']),
  role: z.string().min(1).max(64),
  content: z.string(),
  toolName: z.string().min(1).max(128).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  createdAt: z
    .unknown()
    .refine((v) => checkTimestamp(v) === null && (v as number) >= 0)
    .transform((v) => v as number)
    .optional(),
});

/** The events of one session, in file order. */
export interface SessionEvents {
  readonly agentId: string;
  readonly sessionId: string;
  readonly events: readonly EventInput[];
}

/** A session's events with the file line (1-based) of each event, index for index. */
export interface LocatedSessionEvents extends SessionEvents {
  readonly lines: readonly number[];
}

function fieldOf(issue: z.core.$ZodIssue, json: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
      .slice(0, 3)
      .map((k) => `"${k.slice(0, 32)}"`)
      .join(', ')}`;
  }
  const path = issue.path.map(String).join('.').slice(0, 64);
  if (path === '') return 'must be a JSON object';
  // zod does not keep the input on an issue: a field is missing when the line's object lacks its key.
  const top = issue.path[0];
  const present = typeof json === 'object' && json !== null && typeof top === 'string' && top in json;
  if (issue.code === 'invalid_type' && !present) {
    return `"${path}" is required`;
  }
  switch (path) {
    case 'schema_version':
      return `"schema_version" must be ${EVENTS_FILE_SCHEMA_VERSION} (the only events-file version this CLI reads)`;
    case 'seq':
      return '"seq" must be a positive integer';
    case 'type':
      return '"type" must be message, tool_call or tool_result';
    case 'createdAt':
      return `"createdAt" must be epoch milliseconds (an integer from 0 to ${MAX_TIMESTAMP_MS})`;
    case 'metadata':
      return '"metadata" must be a JSON object';
    default:
      return `"${path}" is invalid`;
  }
}

/** How a parse treats agents: the default agent, and whether it was chosen (`--agent`) for the whole file. */
export interface EventsFileDefaults {
  readonly agentId: string;
  readonly sessionId: string | null;
  /**
   * True when the agent was chosen for the whole file (`ingest --agent A`): a line naming another agent is
   * refused (`ENGRAM_CLI_AGENT_MISMATCH`), so one agent's tool never writes into another's memory.
   */
  readonly agentFixed?: boolean;
}

/**
 * Parses a JSONL events file into sessions (grouped by agent and session, first appearance order; events
 * are sorted by seq). Blank lines are skipped. Lines without `agentId` / `sessionId` take the defaults;
 * a line without a session id and no default is an error. Throws `ENGRAM_CLI_INVALID_EVENTS` naming the line.
 */
export function parseEventsJsonl(text: string, defaults: EventsFileDefaults): SessionEvents[] {
  return parseLocatedEvents(text, defaults).map(({ agentId, sessionId, events }) => ({
    agentId,
    sessionId,
    events,
  }));
}

/**
 * {@link parseEventsJsonl} keeping the file line of every event, so a later refusal of one event (by the
 * store) can name its line. A UTF-8 byte order mark at the start of the file is ignored.
 */
export function parseLocatedEvents(text: string, defaults: EventsFileDefaults): LocatedSessionEvents[] {
  const parser = new EventsFileParser(defaults);
  for (const [index, line] of text.split(/\r?\n/).entries()) parser.add(line, index + 1);
  return parser.sessions();
}

/**
 * The events file read line by line (as `engram ingest` streams it): {@link EventsFileParser.add} each line
 * with its number, then {@link EventsFileParser.sessions}. The same rules and errors as {@link parseLocatedEvents}.
 */
export class EventsFileParser {
  readonly #defaults: EventsFileDefaults;
  readonly #groups = new Map<
    string,
    { agentId: string; sessionId: string; events: [number, EventInput][]; seqs: Set<number> }
  >();
  #count = 0;

  constructor(defaults: EventsFileDefaults) {
    this.#defaults = defaults;
  }

  /** Adds line `number` (1-based); the first line may start with a byte order mark. */
  add(raw: string, number: number): void {
    const line = number === 1 && raw.startsWith('\ufeff') ? raw.slice(1) : raw;
    if (line.trim() === '') return;
    const defaults = this.#defaults;
    const where = `events file line ${number}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new EngramCliError('ENGRAM_CLI_INVALID_EVENTS', `${where}: not valid JSON`);
    }
    const parsed = lineSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new EngramCliError(
        'ENGRAM_CLI_INVALID_EVENTS',
        `${where}: ${issue === undefined ? 'invalid' : fieldOf(issue, json)}`,
      );
    }
    const event = parsed.data;
    if (defaults.agentFixed === true && event.agentId !== undefined && event.agentId !== defaults.agentId) {
      throw new EngramCliError(
        'ENGRAM_CLI_AGENT_MISMATCH',
        `${where}: "agentId" names another agent than --agent ${defaults.agentId}; nothing was written (drop --agent to ingest a file of several agents)`,
      );
    }
    const agentId = event.agentId ?? defaults.agentId;
    const sessionId = event.sessionId ?? defaults.sessionId;
    if (sessionId === null) {
      throw new EngramCliError(
        'ENGRAM_CLI_INVALID_EVENTS',
        `${where}: "sessionId" is required (or pass --session)`,
      );
    }
    this.#count += 1;
    if (this.#count > MAX_EVENTS_PER_FILE) {
      throw new EngramCliError(
        'ENGRAM_CLI_INVALID_EVENTS',
        `events file holds more than ${MAX_EVENTS_PER_FILE} events`,
      );
    }
    const key = JSON.stringify([agentId, sessionId]);
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = { agentId, sessionId, events: [], seqs: new Set() };
      this.#groups.set(key, group);
    }
    if (group.seqs.has(event.seq)) {
      throw new EngramCliError(
        'ENGRAM_CLI_INVALID_EVENTS',
        `${where}: "seq" ${event.seq} repeats within its session`,
      );
    }
    group.seqs.add(event.seq);
    group.events.push([
      number,
      {
        seq: event.seq,
        type: event.type,
        role: event.role,
        content: event.content,
        ...(event.toolName === undefined ? {} : { toolName: event.toolName }),
        ...(event.metadata === undefined ? {} : { metadata: event.metadata }),
        ...(event.createdAt === undefined ? {} : { createdAt: event.createdAt }),
      },
    ]);
  }

  /** The sessions read so far, in first appearance order, each sorted by seq. */
  sessions(): LocatedSessionEvents[] {
    return [...this.#groups.values()].map(({ agentId, sessionId, events }) => {
      const sorted = [...events].sort((a, b) => a[1].seq - b[1].seq);
      return { agentId, sessionId, events: sorted.map(([, e]) => e), lines: sorted.map(([line]) => line) };
    });
  }
}
