/**
 * The commands over one scope's memories by id: `list` (a page of the scope's memories), `update` (a
 * correction: a new version), `forget` (a tombstone) and `history` (versions and tombstones). Each acts in
 * the scope of `--agent` and `--user` as the facade does: with a user, the agent's own memories and that
 * user's are there, another user's are not found.
 */
import { correctMemory, type Engine as Engram, embedNow, type MemoryRecord } from '@engram/memory/compose';
import { CLI_ACTOR, type Command } from './args-spec.js';
import { EXIT, out, outJson, scopeLabel, storeScope, withEngram } from './command-support.js';
import { cliErrorCode, EngramCliError } from './errors.js';
import { formatTimestamp, MISSING, oneLine, padTo } from './format.js';
import type { CliIo } from './io.js';

/** Lifecycles `list --inactive` adds to the active ones. */
const ALL_LIFECYCLES = ['active', 'archived', 'superseded', 'conflicted'] as const;

function notFound(what: string, c: { readonly agent: string; readonly user: string | null }): EngramCliError {
  return new EngramCliError('ENGRAM_CLI_NOT_FOUND', `${what} for ${scopeLabel(c)}`);
}

/** One memory as a line of `engram list`: id, kind, lifecycle, user and the text cut to the room. */
function memoryLine(record: MemoryRecord, room: number): string {
  const head = `${record.id}  ${padTo(record.kind, 10)} ${padTo(record.lifecycle, 10)} ${padTo(record.userId ?? MISSING, 12)} `;
  return `${head}${oneLine(record.content, Math.max(20, room - head.length))}`;
}

/** `engram list`: a page of the scope's memories in id order, and the id the next page starts after. */
export async function list(io: CliIo, c: Extract<Command, { name: 'list' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const memories = await engram.store.listMemories(c.agent, {
        lifecycles: c.inactive ? [...ALL_LIFECYCLES] : ['active'],
        limit: c.limit,
        ...(c.kinds.length === 0 ? {} : { kinds: c.kinds }),
        ...(c.tags.length === 0 ? {} : { tags: c.tags }),
        ...(c.after === null ? {} : { afterId: c.after }),
        ...(c.user === null ? {} : { filter: { forUser: c.user } }),
      });
      // A full page may have a next one: it starts after the last id of this one.
      const next = memories.length === c.limit ? (memories[memories.length - 1]?.id ?? null) : null;
      if (c.json) {
        outJson(io, { agent: c.agent, user: c.user, memories, next });
        return EXIT.ok;
      }
      const room =
        io.stdout.isTTY === true && typeof io.stdout.columns === 'number' ? io.stdout.columns : 110;
      out(
        io,
        `${memories.length} ${memories.length === 1 ? 'memory' : 'memories'} for ${scopeLabel(c)}${c.inactive ? ' (inactive ones too)' : ''}`,
      );
      for (const record of memories) out(io, memoryLine(record, room));
      if (next !== null) out(io, `More: run the same command with --after ${next}`);
      return EXIT.ok;
    },
    { access: 'read' },
  );
}

/**
 * `engram update`: corrects a current memory in the command's scope (a new version; the old one is kept in its
 * history with who — `cli` — and why), embedded before the command returns, as a remembered fact is.
 */
export async function update(io: CliIo, c: Extract<Command, { name: 'update' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      let corrected: Awaited<ReturnType<typeof correctMemory>>;
      try {
        corrected = await correctMemory(engram.store, c.agent, c.id, c.content, {
          ...storeScope(c.user),
          actor: CLI_ACTOR,
          ...(c.reason === null ? {} : { reason: c.reason }),
        });
      } catch (error) {
        throw engram.storeError(error);
      }
      if (corrected === null) {
        throw notFound('no current memory with that id (engram history <id> shows its versions)', c);
      }
      const [embedded] = await embedNow(engram, [corrected.replacement]);
      // A text longer than one chunk is embedded by the drain before the command returns.
      if (embedded?.embeddingState === 'pending') await engram.drain({ agentId: c.agent });
      const id = corrected.replacement.id;
      const text = `Updated: ${id} is current; ${c.id} is superseded and kept in its history.`;
      if (c.json) {
        outJson(io, {
          agent: c.agent,
          user: c.user,
          ok: true,
          id,
          previousId: c.id,
          action: 'updated',
          text,
        });
      } else out(io, text);
      return EXIT.ok;
    },
    { access: 'write', writes: true },
  );
}

/** `engram forget`: forgets a memory and the versions it replaced; the tombstone keeps who, when and why. */
export async function forget(io: CliIo, c: Extract<Command, { name: 'forget' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      let result: Awaited<ReturnType<Engram['store']['forgetMemory']>>;
      try {
        result = await engram.store.forgetMemory(c.agent, c.id, {
          ...storeScope(c.user),
          actor: CLI_ACTOR,
          ...(c.reason === null ? {} : { reason: c.reason }),
        });
      } catch (error) {
        if (cliErrorCode(error) === 'ENGRAM_STORE_NOT_FOUND') {
          throw notFound('no memory with that id (or it is forgotten already)', c);
        }
        throw engram.storeError(error);
      }
      const { forgotten, mode } = result;
      if (c.json) {
        outJson(io, { agent: c.agent, user: c.user, ok: true, id: c.id, forgotten, mode });
        return EXIT.ok;
      }
      const earlier = forgotten.length - 1;
      const versions = earlier > 0 ? ` and ${earlier} earlier version${earlier === 1 ? '' : 's'}` : '';
      out(
        io,
        `Forgot memory ${c.id}${versions}. ${
          mode === 'erase'
            ? 'Its content is erased; a tombstone records when and why.'
            : 'It is no longer searched; the store keeps its content (forget setting: keep).'
        }`,
      );
      return EXIT.ok;
    },
    { access: 'write', writes: true },
  );
}

/** A superseded version's change: when, by whom and why it was replaced. */
interface VersionChange {
  readonly at: number;
  readonly by: string | null;
  readonly reason: string | null;
}

/** One entry of `engram history`: a stored version, or the tombstone of a forgotten one. */
type Version =
  | (MemoryRecord & { readonly change?: VersionChange })
  | {
      readonly id: string;
      readonly agentId: string;
      readonly lifecycle: 'forgotten';
      readonly forgottenAt: number;
      readonly forgottenBy: string | null;
      readonly reason: string | null;
    };

/**
 * A memory's versions, oldest first, as the facade's `history` gives them: each stored version (a superseded
 * one with who replaced it and why, when recorded), and for a forgotten one its tombstone, never its text.
 */
async function versionsOf(
  engram: Engram,
  c: Extract<Command, { name: 'history' }>,
): Promise<readonly Version[]> {
  const history = await engram.store.history(c.agent, c.id, storeScope(c.user));
  if (history.entries.length === 0 && history.records.length === 0) {
    throw notFound('no memory with that id', c);
  }
  const byId = new Map(history.records.map((r) => [r.id, r]));
  const forgotten = new Map(
    history.entries.filter((e) => e.action === 'forgotten').map((e) => [e.memoryId, e]),
  );
  const changes = new Map(
    history.entries
      .filter((e) => e.action === 'superseded' && (e.actor !== null || e.reason !== null))
      .map((e) => [e.memoryId, { at: e.at, by: e.actor, reason: e.reason }]),
  );
  return history.chain.flatMap((id): Version[] => {
    const row = byId.get(id);
    const tomb = forgotten.get(id);
    const change = changes.get(id);
    if (row !== undefined && tomb === undefined) return [change === undefined ? row : { ...row, change }];
    if (tomb === undefined) return [];
    return [
      {
        id,
        agentId: c.agent,
        lifecycle: 'forgotten',
        forgottenAt: tomb.at,
        forgottenBy: tomb.actor,
        reason: tomb.reason,
      },
    ];
  });
}

function versionLines(version: Version): string[] {
  if (version.lifecycle === 'forgotten') {
    const why = version.reason === null ? '' : `: ${version.reason}`;
    return [
      `${version.id}  forgotten  ${formatTimestamp(version.forgottenAt)} by ${version.forgottenBy ?? MISSING}${why}`,
    ];
  }
  const lines = [
    `${version.id}  ${padTo(version.lifecycle, 10)} ${formatTimestamp(version.createdAt)}  ${oneLine(version.content, 80)}`,
  ];
  if (version.change !== undefined) {
    const why = version.change.reason === null ? '' : `: ${version.change.reason}`;
    lines.push(`  replaced ${formatTimestamp(version.change.at)} by ${version.change.by ?? MISSING}${why}`);
  }
  return lines;
}

/** `engram history`: a memory's versions and tombstones, oldest first. */
export async function history(io: CliIo, c: Extract<Command, { name: 'history' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const versions = await versionsOf(engram, c);
      if (c.json) {
        outJson(io, { agent: c.agent, user: c.user, id: c.id, versions });
        return EXIT.ok;
      }
      out(
        io,
        `${versions.length} version${versions.length === 1 ? '' : 's'} of memory ${c.id} for ${scopeLabel(c)}, oldest first`,
      );
      for (const version of versions) for (const line of versionLines(version)) out(io, line);
      return EXIT.ok;
    },
    { access: 'read' },
  );
}
