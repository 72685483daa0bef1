/** The backlog page: embedding states, totals, and what the store says about itself. */
import type { EmbeddingFailure, HealthDto } from '@engram/memory';
import { esc, href, userText, when } from './html.js';
import { type PageContext, scopeParams } from './layout.js';
import type { MessageKey } from './messages.js';
import type { InspectorAbout } from './source.js';

/** Failed rows one page of the backlog lists. */
export const FAILURES_PAGE = 100;

/** One page of the scope's failed embeddings (`memory.embeddingFailures`), after `after` when given. */
export interface FailurePage {
  readonly failures: readonly EmbeddingFailure[];
  readonly after: string | null;
}

function failureTable(ctx: PageContext, page: FailurePage): string {
  const { t, scope } = ctx;
  if (page.failures.length === 0)
    return `<p class="empty" data-testid="failures-empty">${esc(t('backlog.failedEmpty'))}</p>`;
  const rows = page.failures
    .map(
      (f) => `<tr data-failure="${esc(f.id)}">
<td><a class="memory-link" href="${href('memory', { ...scopeParams(scope), id: f.id })}"><code>${userText(f.id)}</code></a></td>
<td><code data-testid="failure-code">${esc(f.errorCode)}</code></td>
<td>${esc(f.attempts)}</td>
<td class="muted">${esc(f.failedAt === null ? t('backlog.unknown') : when(f.failedAt))}</td>
</tr>`,
    )
    .join('\n');
  const last = page.failures[page.failures.length - 1];
  const pages = [
    page.after === null ? '' : `<a href="${href('backlog', scopeParams(scope))}">${esc(t('list.first'))}</a>`,
    page.failures.length < FAILURES_PAGE || last === undefined
      ? ''
      : `<a data-testid="failures-next" href="${href('backlog', { ...scopeParams(scope), after: last.id })}">${esc(t('list.next'))}</a>`,
  ].filter((x) => x !== '');
  return `<table class="grid" data-testid="failures"><thead><tr><th>${esc(t('backlog.col.memory'))}</th><th>${esc(t('backlog.col.code'))}</th><th>${esc(t('backlog.col.attempts'))}</th><th>${esc(t('backlog.col.when'))}</th></tr></thead><tbody>
${rows}
</tbody></table>
${pages.length === 0 ? '' : `<nav class="pager">${pages.join(' ')}</nav>`}`;
}

function size(bytes: number | null): string {
  if (bytes === null) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function cell(label: string, value: string | number, key: string): string {
  return `<div class="stat" data-stat="${esc(key)}"><span class="stat-label">${esc(label)}</span><span class="stat-value">${esc(value)}</span></div>`;
}

/** The backlog page from the health DTO (counts only), the scope's failed rows and the store's facts. */
export function renderBacklog(
  ctx: PageContext,
  health: HealthDto,
  about: InspectorAbout | null,
  failed: FailurePage,
): string {
  const { t } = ctx;
  const states = health.store.byEmbeddingState;
  const totals = health.store.totals;
  const unknown = t('backlog.unknown');
  const integrity = health.store.integrity?.state ?? null;
  return `<section class="stats" data-testid="backlog">
${cell(t('backlog.pending'), states.pending, 'pending')}
${cell(t('backlog.error'), states.error, 'error')}
${cell(t('backlog.ready'), states.ready, 'ready')}
${cell(t('backlog.ftsOnly'), states.ftsOnly, 'ftsOnly')}
</section>
<h3>${esc(t('backlog.failed'))}</h3>
<p class="muted">${esc(t('backlog.errorHint'))}</p>
${failureTable(ctx, failed)}
<h3>${esc(t('backlog.totals'))}</h3>
<section class="stats">
${cell(t('backlog.memories'), totals.memories, 'memories')}
${cell(t('backlog.events'), totals.events, 'events')}
${cell(t('backlog.facts'), totals.facts, 'facts')}
${cell(t('backlog.skills'), totals.skills, 'skills')}
</section>
<h3>${esc(t('filter.lifecycle'))}</h3>
<section class="stats">
${Object.entries(health.store.byLifecycle)
  .map(([k, v]) => cell(t(`lifecycle.${k}` as MessageKey), v, `lifecycle-${k}`))
  .join('\n')}
</section>
<h3>${esc(t('backlog.store'))}</h3>
<dl class="fields" data-testid="about">
<dt>${esc(t('backlog.kind'))}</dt><dd>${esc(about?.kind ?? unknown)}</dd>
<dt>${esc(t('backlog.size'))}</dt><dd data-testid="size">${esc(size(about?.sizeBytes ?? null))}</dd>
<dt>${esc(t('backlog.schema'))}</dt><dd>${esc(about?.schemaVersion ?? unknown)}</dd>
<dt>${esc(t('backlog.embedder'))}</dt><dd data-testid="embedder">${esc(about?.embedder ?? unknown)}</dd>
<dt>${esc(t('backlog.vectorIndex'))}</dt><dd>${esc(about?.vectorIndex ?? unknown)}</dd>
<dt>${esc(t('backlog.integrity'))}</dt><dd>${esc(integrity ?? unknown)}</dd>
</dl>`;
}
