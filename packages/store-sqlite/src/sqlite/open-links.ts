/**
 * Whether an agent may have open conflict links, kept per open store so that a search over an agent that has
 * none (most agents, most of the time) reads no link at all. An answer is kept while the file is unchanged by
 * other connections (`PRAGMA data_version`, which changes when another connection, in this process or
 * another, commits) and until this connection writes a link (every writer calls {@link linksChanged}).
 */
import type { StoreContext } from './context.js';

/** Agents remembered per store; past this the answers are dropped and read again. */
const MAX_AGENTS = 4096;

interface OpenLinksCache {
  /** The `data_version` the answers were read at. */
  version: number;
  readonly agents: Map<string, boolean>;
}

const caches = new WeakMap<StoreContext, OpenLinksCache>();

/** Forgets every answer of this store: called by each writer of `memory_links` on this connection. */
export function linksChanged(ctx: StoreContext): void {
  caches.get(ctx)?.agents.clear();
}

/**
 * False when the agent certainly has no open conflict link; true when it has one, or may (the listing then
 * runs). Costs a `PRAGMA data_version` read, and one indexed `EXISTS` when the answer is not known.
 */
export function mayHaveOpenLinks(ctx: StoreContext, agentId: string): boolean {
  const version = ctx.dataVersion();
  let cache = caches.get(ctx);
  if (cache === undefined) {
    cache = { version, agents: new Map() };
    caches.set(ctx, cache);
  } else if (cache.version !== version) {
    cache.version = version;
    cache.agents.clear();
  }
  const known = cache.agents.get(agentId);
  if (known !== undefined) return known;
  const open =
    ctx
      .stmt(
        'read',
        `SELECT EXISTS (SELECT 1 FROM memory_links WHERE agent_id = ? AND state = 'open') AS open`,
      )
      .get<{ open: number }>(agentId)?.open === 1;
  if (cache.agents.size >= MAX_AGENTS) cache.agents.clear();
  cache.agents.set(agentId, open);
  return open;
}
