/**
 * `createMemory`: Engram in one object. It composes the store, the retriever, the maintenance package and the
 * diagnostics collector (through `engine.ts`) and does the embedding for the caller: small writes are embedded
 * before `add` resolves; bulk `ingest` is embedded by a background drain that `flush()` waits for.
 */
import type { MaintenancePassResult } from '@engram/maintenance';
import { checkStoredRevision, correctMemory } from '@engram/tools';
import { backgroundDrain, embedNow } from './background.js';
import { embeddingFailureList, openConflicts, sessionList } from './backlog.js';
import { ALL_TOOL_DEFINITIONS, buildContext, callTool, sessionMessages } from './conversation.js';
import { type Engine, openEngine } from './engine.js';
import type { EntryScope } from './entries.js';
import { EngramMemoryError, engramErrorCode, invalidInput } from './errors.js';
import {
  agentOf,
  checkEntryMetadata,
  checkEntryTags,
  checkMessages,
  checkOptions,
  checkSession,
  checkText,
  cutMessages,
  reservedTag,
  toItem,
} from './items.js';
import {
  ADD_KEYS,
  CALL_TOOL_KEYS,
  CHANGE_KEYS,
  CLEAR_MESSAGES_KEYS,
  CONFLICTS_KEYS,
  CONTEXT_KEYS,
  EXPORT_KEYS,
  FAILURES_KEYS,
  FORGET_KEYS,
  HEALTH_KEYS,
  IMPORT_KEYS,
  INGEST_KEYS,
  LIST_KEYS,
  MAINTAIN_KEYS,
  MESSAGES_KEYS,
  RERANK_KEYS,
  SCOPE_KEYS,
  SEARCH_KEYS,
  SESSIONS_KEYS,
  UPDATE_KEYS,
} from './option-keys.js';
import { exportForUser, scopedFilter, storeScope, userOf } from './scope.js';
import { checkImportChoices, importClock, prepareImport } from './transfer.js';
import type {
  AddResult,
  ChatMessage,
  IngestSummary,
  Memory,
  MemoryChange,
  MemoryConfig,
  MemoryVersion,
  SearchHit,
} from './types.js';
import { appendMessages, clearSession, extractMessages, linkContradictions, writeTexts } from './writes.js';

/** Translates a store conflict into the facade's own code; anything else passes through. */
function conflictOr(error: unknown): unknown {
  return engramErrorCode(error) === 'ENGRAM_STORE_REVISION_CONFLICT'
    ? new EngramMemoryError('ENGRAM_MEMORY_CONFLICT', 'the memory changed concurrently; read it again', {
        cause: error,
      })
    : error;
}

/**
 * Opens (or creates) the memory file at `config.path`, or the PostgreSQL database when it is a `postgres://` or
 * `postgresql://` URL. Throws a typed error when the options are invalid, the file or database cannot be
 * opened, or it records another embedder than the one given.
 */
export async function createMemory(config: MemoryConfig): Promise<Memory> {
  if (typeof config !== 'object' || config === null) throw invalidInput('config must be an object');
  if (typeof config.path !== 'string' || config.path.trim() === '')
    throw invalidInput('path must be a file path or a PostgreSQL URL');
  if (config.idFactory !== undefined && typeof config.idFactory !== 'function')
    throw invalidInput('idFactory must be a function');
  if (config.rerank !== undefined) checkOptions(config.rerank, 'rerank', RERANK_KEYS);
  const defaultAgent = agentOf(config, 'default');
  const defaultUser = userOf(config, null);
  const engine = await openEngine({
    path: config.path,
    ...(config.embedder === undefined ? {} : { embedder: config.embedder }),
    ...(config.model === undefined ? {} : { model: config.model }),
    ...(config.encryptionKey === undefined ? {} : { encryptionKey: config.encryptionKey }),
    ...(config.vectorIndex === undefined ? {} : { vectorIndex: config.vectorIndex }),
    ...(config.onIndexProgress === undefined ? {} : { onIndexProgress: config.onIndexProgress }),
    ...(config.idFactory === undefined ? {} : { idFactory: config.idFactory }),
    ...(config.rerank === undefined ? {} : { rerank: config.rerank }),
    ...(config.processBeat === undefined ? {} : { processBeat: config.processBeat }),
    ...(config.threads === undefined ? {} : { threads: config.threads }),
  });
  const drain = backgroundDrain(engine, config.backgroundDrain !== false);
  let closed = false;
  const open = (): Engine => {
    if (closed) throw new EngramMemoryError('ENGRAM_MEMORY_CLOSED', 'the memory is closed');
    return engine;
  };
  // Rows left pending by an earlier process are embedded in the background.
  if ((await engine.store.countEmbeddingBacklog()).total > 0) drain.kick();

  // One append at a time per session in this process: each reads the session's last position and writes after
  // it. Another process appending at the same position is a store conflict: read again and append after it.
  const sessionTails = new Map<string, Promise<unknown>>();
  async function logInSession<T>(agentId: string, sessionId: string, append: () => Promise<T>): Promise<T> {
    const key = JSON.stringify([agentId, sessionId]);
    const before = sessionTails.get(key) ?? Promise.resolve();
    const run = before.then(async () => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await append();
        } catch (error) {
          if (attempt >= 3 || engramErrorCode(error) !== 'ENGRAM_STORE_CONFLICT') throw error;
        }
      }
    });
    const settled = run.catch(() => undefined);
    sessionTails.set(key, settled);
    void settled.then(() => {
      if (sessionTails.get(key) === settled) sessionTails.delete(key);
    });
    return run;
  }

  async function addMessages(
    messages: readonly ChatMessage[],
    agentId: string,
    sessionId: string,
    skipLogged: boolean,
    scope: EntryScope,
  ): Promise<AddResult> {
    const e = open();
    const logged = await logInSession(agentId, sessionId, () =>
      appendMessages(e, agentId, sessionId, messages, { rows: true, skipLogged, scope }),
    );
    if (!e.hasModel) {
      const added = await embedNow(e, logged.rows);
      return { added: added.map(toItem), unchanged: [], events: logged.appended, extraction: 'noModel' };
    }
    const extracted = await extractMessages(e, agentId, sessionId, logged, scope);
    const added = await embedNow(e, [...logged.rows, ...extracted.rows]);
    return {
      added: added.map(toItem),
      unchanged: [],
      events: logged.appended,
      ...(extracted.errorCode === undefined
        ? { extraction: 'extracted' }
        : { extraction: 'failed', extractionError: extracted.errorCode }),
    };
  }

  const memory: Memory = {
    agentId: defaultAgent,

    async add(input, options) {
      const o = checkOptions(options, 'options', ADD_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const userId = userOf(o, defaultUser);
      const sessionId = checkSession(o.sessionId);
      if (o.validFrom !== undefined && !(Number.isSafeInteger(o.validFrom) && o.validFrom >= 0)) {
        throw invalidInput('validFrom must be epoch milliseconds');
      }
      if (Array.isArray(input)) {
        if (o.validFrom !== undefined) {
          throw invalidInput('validFrom applies to a text; messages take the time they are logged at');
        }
        const messages = cutMessages(checkMessages(input), o.maxContentChars);
        const scope: EntryScope = {
          userId,
          ...(o.tags === undefined ? {} : { tags: checkEntryTags(o.tags) }),
          ...(o.metadata === undefined ? {} : { metadata: checkEntryMetadata(o.metadata) }),
        };
        return addMessages(messages, agentId, sessionId, o.skipLogged !== false, scope);
      }
      const text = checkText(input, 'text');
      const reserved = reservedTag(Array.isArray(o.tags) ? o.tags : undefined, false);
      if (reserved !== null) throw invalidInput(`tags[${reserved}] uses a prefix Engram reserves`);
      const written = await writeTexts(open(), agentId, [text], {
        kind: o.kind ?? 'fact',
        importance: o.importance ?? 0.7,
        ...(o.tags === undefined ? {} : { tags: o.tags }),
        ...(userId === null ? {} : { userId }),
        ...(o.sessionId === undefined ? {} : { sessionId }),
        ...(o.metadata === undefined ? {} : { metadata: o.metadata }),
        ...(o.validFrom === undefined ? {} : { validFrom: o.validFrom }),
      });
      const added = await embedNow(engine, written.added);
      const fact = added[0];
      const conflicts = fact?.kind === 'fact' ? await linkContradictions(engine, fact) : [];
      return {
        added: added.map(toItem),
        unchanged: written.unchanged.map(toItem),
        events: 0,
        ...(conflicts.length === 0 ? {} : { conflicts }),
      };
    },

    async search(query, options) {
      const o = checkOptions(options, 'options', SEARCH_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const filter = scopedFilter(o.filter, userOf(o, defaultUser));
      checkText(query, 'query');
      if (o.referenceTime !== undefined && !(Number.isSafeInteger(o.referenceTime) && o.referenceTime >= 0)) {
        throw invalidInput('referenceTime must be epoch milliseconds');
      }
      if (o.minScore !== undefined && !(Number.isFinite(o.minScore) && o.minScore >= 0)) {
        throw invalidInput('minScore must be a finite number ≥ 0');
      }
      const { results, execution } = await open().retriever.search(agentId, query, {
        ...(o.limit === undefined ? {} : { limit: o.limit }),
        ...(o.kinds === undefined ? {} : { kinds: o.kinds }),
        ...(o.tags === undefined ? {} : { tags: o.tags }),
        ...(o.signal === undefined ? {} : { signal: o.signal }),
        ...(filter === undefined ? {} : { filter }),
        ...(o.asOf === undefined ? {} : { asOf: o.asOf }),
        ...(o.includeHistory === undefined ? {} : { includeHistory: o.includeHistory }),
        ...(o.referenceTime === undefined ? {} : { referenceTime: o.referenceTime }),
      });
      if (execution.outcome === 'emptyQuery') return [];
      if (execution.outcome !== 'completed') {
        throw new EngramMemoryError('ENGRAM_MEMORY_SEARCH_FAILED', `search ${execution.outcome}`);
      }
      // A vector arm the store refused: an answer from the keyword arm alone stands, unless the refusal is the
      // vector index another connection changed (it lasts until the memory is reopened: say so, not degrade).
      if (execution.degradations.includes('storeUnusable')) await engine.checkVectorIndex();
      const minScore = o.minScore ?? Number.NEGATIVE_INFINITY;
      return results
        .filter((r) => r.score >= minScore)
        .map((r): SearchHit => ({ ...toItem(r.record), score: r.score, explanation: r.explanation }));
    },

    async get(id, options) {
      const o = checkOptions(options, 'options', SCOPE_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const scope = storeScope(userOf(o, defaultUser));
      const row = await open().store.getMemory(agentId, checkText(id, 'id'), scope);
      return row === null ? null : toItem(row);
    },

    async update(id, change, options) {
      const o = checkOptions(options, 'options', UPDATE_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const scope = storeScope(userOf(o, defaultUser));
      checkText(id, 'id');
      const patch: MemoryChange =
        typeof change === 'string' ? { content: change } : checkOptions(change, 'change', CHANGE_KEYS);
      if (patch.content !== undefined) checkText(patch.content, 'change.content');
      const reserved = reservedTag(Array.isArray(patch.tags) ? patch.tags : undefined, false);
      if (reserved !== null) throw invalidInput(`change.tags[${reserved}] uses a prefix Engram reserves`);
      if (
        patch.content === undefined &&
        patch.tags === undefined &&
        patch.importance === undefined &&
        patch.metadata === undefined
      ) {
        throw invalidInput('change names nothing to change');
      }
      const e = open();
      try {
        let row = await e.store.getMemory(agentId, id, scope);
        // A user's call changes that user's own memories only (the agent's shared ones are not found to it).
        if (row !== null && scope !== undefined && row.userId !== scope.forUser) row = null;
        if (
          row !== null &&
          row.lifecycle === 'active' &&
          patch.content !== undefined &&
          patch.content !== row.content
        ) {
          // New text: a new version supersedes the memory (the old one stays in its history).
          const corrected = await correctMemory(e.store, agentId, id, patch.content, {
            ...scope,
            ...(patch.metadata === undefined ? {} : { metadata: patch.metadata }),
            ...(o.actor === undefined && o.reason === undefined ? {} : { actor: o.actor ?? 'caller' }),
            ...(o.reason === undefined ? {} : { reason: o.reason }),
          });
          row = corrected?.replacement ?? null;
        }
        if (row === null || row.lifecycle !== 'active') {
          throw new EngramMemoryError('ENGRAM_MEMORY_NOT_FOUND', 'no current memory with that id');
        }
        checkStoredRevision(row.revision);
        if (
          patch.tags !== undefined ||
          patch.importance !== undefined ||
          (patch.metadata !== undefined && row.id === id)
        ) {
          row = await e.store.updateMemory(
            agentId,
            row.id,
            row.revision,
            {
              ...(patch.tags === undefined ? {} : { tags: patch.tags }),
              ...(patch.importance === undefined ? {} : { importance: patch.importance }),
              ...(patch.metadata === undefined ? {} : { metadata: patch.metadata }),
            },
            scope,
          );
        }
        const [embedded] = await embedNow(e, [row]);
        return toItem(embedded ?? row);
      } catch (error) {
        throw conflictOr(e.storeError(error));
      }
    },

    async delete(id, options) {
      const o = checkOptions(options, 'options', FORGET_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const scope = storeScope(userOf(o, defaultUser));
      checkText(id, 'id');
      try {
        // The memory and the versions it replaced; a tombstone records who, when and why.
        await open().store.forgetMemory(agentId, id, {
          ...scope,
          actor: o.actor ?? 'caller',
          ...(o.reason === undefined ? {} : { reason: o.reason }),
        });
        return true;
      } catch (error) {
        if (engramErrorCode(error) === 'ENGRAM_STORE_NOT_FOUND') return false;
        throw engine.storeError(error);
      }
    },

    async deleteAll(options) {
      const o = checkOptions(options, 'options', SCOPE_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const userId = userOf(o, defaultUser);
      const e = open();
      try {
        return (await e.store.deleteAll(agentId, { actor: 'caller', ...(userId === null ? {} : { userId }) }))
          .memories;
      } catch (error) {
        throw e.storeError(error);
      }
    },

    async history(id, options) {
      const o = checkOptions(options, 'options', SCOPE_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const scope = storeScope(userOf(o, defaultUser));
      const history = await open().store.history(agentId, checkText(id, 'id'), scope);
      if (history.entries.length === 0 && history.records.length === 0) {
        throw new EngramMemoryError('ENGRAM_MEMORY_NOT_FOUND', 'no memory with that id');
      }
      const byId = new Map(history.records.map((r) => [r.id, r]));
      const forgotten = new Map(
        history.entries
          .filter((entry) => entry.action === 'forgotten')
          .map((entry) => [entry.memoryId, entry]),
      );
      const changes = new Map(
        history.entries
          .filter((entry) => entry.action === 'superseded' && (entry.actor !== null || entry.reason !== null))
          .map((entry) => [entry.memoryId, { at: entry.at, by: entry.actor, reason: entry.reason }]),
      );
      return history.chain.flatMap((chainId): MemoryVersion[] => {
        const row = byId.get(chainId);
        const tomb = forgotten.get(chainId);
        const change = changes.get(chainId);
        if (row !== undefined && tomb === undefined)
          return [change === undefined ? toItem(row) : { ...toItem(row), change }];
        if (tomb === undefined) return [];
        // A forgotten version shows its tombstone, never its text (even where the store kept the row).
        return [
          {
            id: chainId,
            agentId,
            lifecycle: 'forgotten',
            forgottenAt: tomb.at,
            forgottenBy: tomb.actor,
            reason: tomb.reason,
          },
        ];
      });
    },

    async list(options) {
      const o = checkOptions(options, 'options', LIST_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const filter = scopedFilter(o.filter, userOf(o, defaultUser));
      const rows = await open().store.listMemories(agentId, {
        lifecycles:
          o.includeInactive === true ? ['active', 'archived', 'superseded', 'conflicted'] : ['active'],
        ...(o.kinds === undefined ? {} : { kinds: o.kinds }),
        ...(o.tags === undefined ? {} : { tags: o.tags }),
        ...(filter === undefined ? {} : { filter }),
        ...(o.limit === undefined ? {} : { limit: o.limit }),
        ...(o.afterId === undefined ? {} : { afterId: o.afterId }),
      });
      return rows.map(toItem);
    },

    async ingest(input, options): Promise<IngestSummary> {
      const o = checkOptions(options, 'options', INGEST_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const userId = userOf(o, defaultUser);
      const sessionId = checkSession(o.sessionId);
      if (!Array.isArray(input)) throw invalidInput('ingest takes an array of texts or of messages');
      const e = open();
      let added: number;
      let unchanged: number;
      if (input.length === 0) {
        added = 0;
        unchanged = 0;
      } else if (input.every((x) => typeof x === 'string')) {
        for (const [i, text] of input.entries()) checkText(text, `texts[${i}]`);
        const written = await writeTexts(e, agentId, input as readonly string[], {
          kind: 'fact',
          importance: 0.7,
          ...(userId === null ? {} : { userId }),
        });
        added = written.added.length;
        unchanged = written.unchanged.length;
      } else {
        const messages = checkMessages(input);
        const logged = await logInSession(agentId, sessionId, () =>
          appendMessages(e, agentId, sessionId, messages, {
            rows: false,
            skipLogged: true,
            scope: { userId },
          }),
        );
        added = logged.appended;
        unchanged = messages.length - logged.appended;
      }
      drain.kick();
      // For a user, what this call left waiting (the agent's backlog would count other users' rows).
      if (userId !== null) return { added, unchanged, pending: added };
      const backlog = await e.store.countEmbeddingBacklog();
      return { added, unchanged, pending: backlog.byAgent[agentId] ?? 0 };
    },

    async maintain(options): Promise<MaintenancePassResult> {
      const o = checkOptions(options, 'options', MAINTAIN_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const userId = userOf(o, defaultUser);
      const e = open();
      const result = await e.runner.run(agentId, {
        ...(o.force === true ? { force: true } : {}),
        ...(userId === null ? {} : { userId }),
      });
      // What the pass wrote (merged rows) is embedded before it resolves.
      await e.drain({ agentId });
      return result;
    },

    export(options) {
      const o = checkOptions(options, 'options', EXPORT_KEYS);
      const userId = userOf(o, defaultUser);
      const sessionId = o.sessionId === undefined ? null : checkSession(o.sessionId);
      // A user's export is of one agent: the memory's, unless it names another.
      const agentId =
        (o.agentId === undefined || o.agentId === null) && userId === null && sessionId === null
          ? null
          : agentOf(o, defaultAgent);
      if ((userId !== null || sessionId !== null) && o.agentId === null)
        throw invalidInput('a user or session export is of one agent');
      if (o.vectors !== undefined && typeof o.vectors !== 'boolean')
        throw invalidInput('vectors must be a boolean');
      const records = open().store.exportRecords({
        ...(agentId === null ? {} : { agentId }),
        ...(o.vectors === true ? { vectors: true } : {}),
      });
      return userId === null && sessionId === null ? records : exportForUser(records, userId, sessionId);
    },

    async import(records, options) {
      const o = checkOptions(options, 'options', IMPORT_KEYS);
      // A restore writes rows of any user (and tells which keys exist): an operator's act for the whole agent,
      // never a user's call.
      if (defaultUser !== null)
        throw invalidInput('import is for the whole agent: open the memory without a userId');
      const choices = checkImportChoices({
        ...(o.agentId === undefined ? {} : { agentId: o.agentId }),
        ...(o.keepAges === undefined ? {} : { keepAges: o.keepAges }),
      });
      if (o.onProgress !== undefined && typeof o.onProgress !== 'function')
        throw invalidInput('onProgress must be a function');
      if (
        typeof (records as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] !== 'function' &&
        typeof (records as { [Symbol.iterator]?: unknown })?.[Symbol.iterator] !== 'function'
      )
        throw invalidInput('records must be an iterable of export records');
      const e = open();
      const summary = await e.store.importRecords(prepareImport(records, choices), {
        ...importClock(choices, Date.now()),
        ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }),
      });
      // Memories imported without their vectors are embedded in the background.
      drain.kick();
      return summary;
    },

    async health(options) {
      const o = checkOptions(options, 'options', HEALTH_KEYS);
      const agentId = o.agentId === null ? null : agentOf(o, defaultAgent);
      return open().health(agentId);
    },

    async context(query, options) {
      const o = checkOptions(options, 'options', CONTEXT_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const userId = userOf(o, defaultUser);
      if (query !== null) checkText(query, 'query');
      return buildContext(open(), agentId, userId, query, {
        ...o,
        ...(o.sessionId === undefined ? {} : { sessionId: checkSession(o.sessionId) }),
      });
    },

    toolDefinitions: ALL_TOOL_DEFINITIONS,

    async callTool(name, args, options) {
      const o = checkOptions(options, 'options', CALL_TOOL_KEYS);
      const agentId = agentOf(o, defaultAgent);
      if (typeof name !== 'string') throw invalidInput('name must be a string');
      const userId = userOf(o, defaultUser);
      const e = open();
      const sessionId = o.sessionId === undefined ? undefined : checkSession(o.sessionId);
      const result = await callTool(e, name, args, agentId, userId, sessionId, o.signal);
      // What a tool wrote is searchable by meaning when the call returns, as `add` and `update` are (a text
      // longer than one chunk, which the tool could not embed itself, is embedded here).
      const data = result.data;
      if (result.ok && data !== undefined && 'id' in data && data.action !== 'duplicate') {
        const row = await e.store.getMemory(agentId, data.id, storeScope(userId));
        if (row !== null && row.embeddingState === 'pending') await embedNow(e, [row]);
      }
      return { ok: result.ok, text: result.text };
    },

    async messages(options) {
      const o = checkOptions(options, 'options', MESSAGES_KEYS);
      const agentId = agentOf(o, defaultAgent);
      const userId = userOf(o, defaultUser);
      return sessionMessages(open(), agentId, userId, checkSession(o.sessionId), o.limit ?? 1000);
    },

    async clearMessages(options) {
      const o = checkOptions(options, 'options', CLEAR_MESSAGES_KEYS);
      const agentId = agentOf(o, defaultAgent);
      await clearSession(open(), agentId, checkSession(o.sessionId), userOf(o, defaultUser));
    },

    async conflicts(options) {
      const o = checkOptions(options, 'options', CONFLICTS_KEYS);
      return openConflicts(open(), agentOf(o, defaultAgent), userOf(o, defaultUser), o.limit);
    },

    async sessions(options) {
      const o = checkOptions(options, 'options', SESSIONS_KEYS);
      return sessionList(open(), agentOf(o, defaultAgent), userOf(o, defaultUser), o);
    },

    async embeddingFailures(options) {
      const o = checkOptions(options, 'options', FAILURES_KEYS);
      return embeddingFailureList(open(), agentOf(o, defaultAgent), userOf(o, defaultUser), o);
    },

    async flush() {
      open();
      await drain.flush();
    },

    async close() {
      if (closed) return;
      closed = true;
      await drain.stop();
      await engine.close();
    },
  };
  return memory;
}
