/** The memories list (filtered, keyset-paged) and one memory with its history and correction forms. */
import { LIFECYCLES, MEMORY_KINDS } from '@engram/contracts';
import type { MemoryItem, MemoryVersion } from '@engram/memory';
import { esc, fieldText, href, userText, when } from './html.js';
import { hiddenScope, type PageContext, scopeParams } from './layout.js';
import type { MessageKey } from './messages.js';
import type { InspectorMemory } from './source.js';

/** Memories per page of the list. */
export const PAGE_SIZE = 50;
/** Rows read per `list` call while filtering by lifecycle or embedding. */
const SCAN_BATCH = 200;
/** Most `list` calls one page makes; past that the page ends early with a next link. */
const SCAN_ROUNDS = 10;

/** The list's filters, read from the query. */
export interface ListFilters {
  readonly kind: string | null;
  readonly tag: string | null;
  readonly lifecycle: string | null;
  readonly embedding: 'embedded' | 'pending' | null;
  readonly after: string | null;
}

/** Reads the list's filters; an unknown kind or lifecycle is null (any). */
export function readFilters(query: URLSearchParams): ListFilters {
  const kind = query.get('kind');
  const lifecycle = query.get('lifecycle');
  const embedding = query.get('embedding');
  const tag = query.get('tag')?.trim() ?? '';
  const after = query.get('after') ?? '';
  return {
    kind: kind !== null && (MEMORY_KINDS as readonly string[]).includes(kind) ? kind : null,
    tag: tag === '' ? null : tag,
    lifecycle: lifecycle !== null && (LIFECYCLES as readonly string[]).includes(lifecycle) ? lifecycle : null,
    embedding: embedding === 'embedded' || embedding === 'pending' ? embedding : null,
    after: after === '' ? null : after,
  };
}

/** One page of memories and the cursor of the next one (null at the end). */
export async function listPage(
  memory: InspectorMemory,
  ctx: PageContext,
  filters: ListFilters,
): Promise<{ readonly items: readonly MemoryItem[]; readonly next: string | null }> {
  const { agentId, userId } = ctx.scope;
  // `list` pages by id and filters kind and tags itself; lifecycle and embedding are filtered here.
  const inactive = filters.lifecycle !== null && filters.lifecycle !== 'active';
  const keep = (item: MemoryItem): boolean =>
    (filters.lifecycle === null || item.lifecycle === filters.lifecycle) &&
    (filters.embedding === null || item.embedded === (filters.embedding === 'embedded'));
  const items: MemoryItem[] = [];
  let cursor = filters.after;
  for (let round = 0; round < SCAN_ROUNDS; round++) {
    const batch = await memory.list({
      agentId,
      ...(userId === null ? {} : { userId }),
      ...(filters.kind === null ? {} : { kinds: [filters.kind as MemoryItem['kind']] }),
      ...(filters.tag === null ? {} : { tags: [filters.tag] }),
      ...(inactive ? { includeInactive: true } : {}),
      limit: SCAN_BATCH,
      ...(cursor === null ? {} : { afterId: cursor }),
    });
    for (const item of batch) {
      cursor = item.id;
      if (!keep(item)) continue;
      items.push(item);
      if (items.length === PAGE_SIZE) return { items, next: item.id };
    }
    if (batch.length < SCAN_BATCH) return { items, next: null };
  }
  return { items, next: cursor };
}

function option(value: string, label: string, selected: boolean): string {
  return `<option value="${esc(value)}"${selected ? ' selected' : ''}>${esc(label)}</option>`;
}

function lifecycleLabel(ctx: PageContext, lifecycle: string): string {
  return ctx.t(`lifecycle.${lifecycle}` as MessageKey);
}

/** The memories page. */
export function renderList(
  ctx: PageContext,
  filters: ListFilters,
  page: { readonly items: readonly MemoryItem[]; readonly next: string | null },
): string {
  const { t } = ctx;
  const kinds = [option('', t('filter.any'), filters.kind === null)]
    .concat(MEMORY_KINDS.map((k) => option(k, k, filters.kind === k)))
    .join('');
  const lifecycles = [option('', t('lifecycle.active'), filters.lifecycle === null)]
    .concat(LIFECYCLES.map((l) => option(l, lifecycleLabel(ctx, l), filters.lifecycle === l)))
    .join('');
  const embedding = [
    option('', t('filter.any'), filters.embedding === null),
    option('embedded', t('filter.embedded'), filters.embedding === 'embedded'),
    option('pending', t('filter.notEmbedded'), filters.embedding === 'pending'),
  ].join('');
  const scope = ctx.scope;
  const form = `<form class="filters" method="get" action="./">
<input type="hidden" name="agent" value="${esc(scope.agentId)}">
${scope.userId === null ? '' : `<input type="hidden" name="user" value="${esc(scope.userId)}">`}
<label>${esc(t('filter.kind'))} <select name="kind" data-testid="filter-kind">${kinds}</select></label>
<label>${esc(t('filter.tag'))} <input name="tag" data-testid="filter-tag" value="${esc(filters.tag ?? '')}" maxlength="256"></label>
<label>${esc(t('filter.lifecycle'))} <select name="lifecycle" data-testid="filter-lifecycle">${lifecycles}</select></label>
<label>${esc(t('filter.embedding'))} <select name="embedding" data-testid="filter-embedding">${embedding}</select></label>
<button type="submit">${esc(t('filter.apply'))}</button>
</form>`;
  const rows = page.items
    .map(
      (m) => `<tr data-memory="${esc(m.id)}">
<td><a class="memory-link" href="${href('memory', { ...scopeParams(scope), id: m.id })}">${userText(m.content)}</a></td>
<td>${esc(m.kind)}</td>
<td>${m.tags.map((tag) => `<span class="tag">${userText(tag)}</span>`).join(' ')}</td>
<td><span class="life life-${esc(m.lifecycle)}">${esc(lifecycleLabel(ctx, m.lifecycle))}</span></td>
<td>${esc(m.embedded ? t('filter.embedded') : t('filter.notEmbedded'))}</td>
<td>${m.userId === null ? '' : userText(m.userId)}</td>
<td class="nowrap">${esc(when(m.updatedAt))}</td>
</tr>`,
    )
    .join('\n');
  const table =
    page.items.length === 0
      ? `<p class="empty" data-testid="list-empty">${esc(t('list.empty'))}</p>`
      : `<table class="grid" data-testid="memories"><thead><tr><th>${esc(t('col.memory'))}</th><th>${esc(t('col.kind'))}</th><th>${esc(t('col.tags'))}</th><th>${esc(t('col.lifecycle'))}</th><th>${esc(t('col.embedding'))}</th><th>${esc(t('col.user'))}</th><th>${esc(t('col.updated'))}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
  const base = {
    ...scopeParams(scope),
    kind: filters.kind,
    tag: filters.tag,
    lifecycle: filters.lifecycle,
    embedding: filters.embedding,
  };
  const pager = [
    filters.after === null
      ? ''
      : `<a data-testid="page-first" href="${href('', base)}">${esc(t('list.first'))}</a>`,
    page.next === null
      ? ''
      : `<a data-testid="page-next" href="${href('', { ...base, after: page.next })}">${esc(t('list.next'))}</a>`,
  ].join(' ');
  return `${form}
<p class="muted">${esc(t('list.count', { count: page.items.length }))}</p>
${table}
<nav class="pager">${pager}</nav>`;
}

/** The correction forms of one current memory: update its text, forget it (each confirmed on the next page). */
export function correctionForms(ctx: PageContext, item: MemoryItem): string {
  const { t } = ctx;
  return `<div class="actions">
<form method="post" action="./action" class="action" data-testid="update-form">
${hiddenScope(ctx)}<input type="hidden" name="op" value="update"><input type="hidden" name="id" value="${esc(item.id)}">
<label>${esc(t('action.content'))}<textarea name="content" rows="2" required maxlength="65536">${fieldText(item.content)}</textarea></label>
<label>${esc(t('action.reason'))} <input name="reason" required maxlength="500"></label>
<button type="submit">${esc(t('action.update'))}</button>
</form>
<form method="post" action="./action" class="action" data-testid="forget-form">
${hiddenScope(ctx)}<input type="hidden" name="op" value="forget"><input type="hidden" name="id" value="${esc(item.id)}">
<label>${esc(t('action.reason'))} <input name="reason" required maxlength="500"></label>
<button type="submit" class="danger">${esc(t('action.forget'))}</button>
</form>
</div>`;
}

function versionEntry(ctx: PageContext, version: MemoryVersion, index: number): string {
  const { t } = ctx;
  if (version.lifecycle === 'forgotten') {
    const by = version.forgottenBy ?? t('memory.nobody');
    return `<li class="version forgotten" data-version="${index}">
<span class="life life-forgotten">${esc(t('lifecycle.forgotten'))}</span>
<span>${esc(t('memory.forgotten', { by: '\u0000', at: when(version.forgottenAt) })).replace('\u0000', userText(by))}</span>
${version.reason === null ? '' : `<p class="reason">${esc(t('memory.changeReason', { reason: '\u0000' })).replace('\u0000', userText(version.reason))}</p>`}
</li>`;
  }
  const change =
    version.change === undefined
      ? ''
      : `<p class="change">${esc(t('memory.changedBy', { by: '\u0000', at: when(version.change.at) })).replace('\u0000', userText(version.change.by ?? t('memory.nobody')))}${
          version.change.reason === null
            ? ''
            : ` · ${esc(t('memory.changeReason', { reason: '\u0000' })).replace('\u0000', userText(version.change.reason))}`
        }</p>`;
  return `<li class="version" data-version="${index}" data-lifecycle="${esc(version.lifecycle)}">
<span class="life life-${esc(version.lifecycle)}">${esc(t(`lifecycle.${version.lifecycle}` as MessageKey))}</span>
<span class="muted">${esc(when(version.createdAt))}</span>
<p class="content">${userText(version.content)}</p>
${change}
</li>`;
}

/** One memory: its fields, its history (versions, changes, tombstones) and, while current, its corrections. */
export function renderMemory(
  ctx: PageContext,
  item: MemoryItem | null,
  history: readonly MemoryVersion[],
  notice: string | null,
): string {
  const { t } = ctx;
  const head =
    item === null
      ? history.length > 0
        ? ''
        : `<p class="notice" data-testid="not-found">${esc(t('memory.notFound'))}</p>`
      : `<dl class="fields" data-testid="memory">
<dt>${esc(t('col.memory'))}</dt><dd class="content" data-testid="memory-content">${userText(item.content)}</dd>
<dt>${esc(t('memory.id'))}</dt><dd><code>${userText(item.id)}</code></dd>
<dt>${esc(t('col.kind'))}</dt><dd>${esc(item.kind)}</dd>
<dt>${esc(t('col.lifecycle'))}</dt><dd><span class="life life-${esc(item.lifecycle)}">${esc(t(`lifecycle.${item.lifecycle}` as MessageKey))}</span></dd>
<dt>${esc(t('col.tags'))}</dt><dd>${item.tags.map((tag) => `<span class="tag">${userText(tag)}</span>`).join(' ')}</dd>
<dt>${esc(t('col.embedding'))}</dt><dd>${esc(item.embedded ? t('filter.embedded') : t('filter.notEmbedded'))}</dd>
<dt>${esc(t('memory.importance'))}</dt><dd>${esc(item.importance.toFixed(2))}</dd>
<dt>${esc(t('col.user'))}</dt><dd>${item.userId === null ? '—' : userText(item.userId)}</dd>
<dt>${esc(t('memory.session'))}</dt><dd>${item.sessionId === null ? '—' : userText(item.sessionId)}</dd>
${item.supersededBy === null ? '' : `<dt>${esc(t('memory.supersededBy'))}</dt><dd><a href="${href('memory', { ...scopeParams(ctx.scope), id: item.supersededBy })}">${userText(item.supersededBy)}</a></dd>`}
</dl>`;
  const actions =
    item !== null && item.lifecycle === 'active'
      ? `<h3>${esc(t('memory.actions'))}</h3>${correctionForms(ctx, item)}`
      : '';
  const versions = history.map((v, i) => versionEntry(ctx, v, i)).join('\n');
  return `${notice === null ? '' : `<p class="notice ok" data-testid="notice">${esc(notice)}</p>`}
${head}
<h3>${esc(t('memory.history'))}</h3>
<p class="muted">${esc(t('memory.historyHint'))}</p>
<ol class="history" data-testid="history">${versions}</ol>
${actions}`;
}
