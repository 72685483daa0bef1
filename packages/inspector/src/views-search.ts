/** The search page: the real retrieval, each result drawn with its explanation. */
import type { RetrievalExplanation, SearchHit } from '@engram/memory';
import { esc, href, num, userText } from './html.js';
import { type PageContext, scopeParams } from './layout.js';
import type { MessageKey } from './messages.js';

/** Results the search page asks for. */
export const SEARCH_LIMIT = 20;

function row(label: string, value: string, key: string): string {
  return `<tr data-explain="${esc(key)}"><th>${esc(label)}</th><td>${value}</td></tr>`;
}

/** The explanation of one result as a table: arms, ranks, fusion terms and the conflict it is part of. */
export function renderExplanation(ctx: PageContext, e: RetrievalExplanation): string {
  const { t } = ctx;
  const arms = e.arms.map(
    (arm) => `<span class="arm arm-${esc(arm)}">${esc(t(`arm.${arm}` as MessageKey))}</span>`,
  );
  const rows = [
    row(t('explain.arms'), arms.join(' '), 'arms'),
    e.lexicalRank === undefined ? '' : row(t('explain.lexical'), esc(num(e.lexicalRank)), 'lexicalRank'),
    e.lexicalScore === undefined
      ? ''
      : row(t('explain.lexicalScore'), esc(num(e.lexicalScore)), 'lexicalScore'),
    e.vectorRank === undefined ? '' : row(t('explain.vector'), esc(num(e.vectorRank)), 'vectorRank'),
    e.similarity === undefined ? '' : row(t('explain.similarity'), esc(num(e.similarity)), 'similarity'),
    row(t('explain.rrf'), esc(num(e.rrf)), 'rrf'),
    row(t('explain.relevance'), esc(num(e.relevance)), 'relevance'),
    row(t('explain.importance'), esc(num(e.importance)), 'importance'),
    row(t('explain.recency'), esc(num(e.recency)), 'recency'),
    row(t('explain.final'), esc(num(e.final)), 'final'),
  ];
  if (e.conflict !== undefined) {
    const side = e.conflict.status === 'newer' ? t('explain.conflictNewer') : t('explain.conflictOlder');
    const others = e.conflict.with
      .map((id) => `<a href="${href('memory', { ...scopeParams(ctx.scope), id })}">${userText(id)}</a>`)
      .join(', ');
    rows.push(row(t('explain.conflict'), `${esc(side)} ${others}`, 'conflict'));
  }
  return `<table class="explain">${rows.join('')}</table>`;
}

/** The search page: the query form and, for a query, each hit with its explanation. */
export function renderSearch(ctx: PageContext, query: string, hits: readonly SearchHit[] | null): string {
  const { t, scope } = ctx;
  const form = `<form class="search" method="get" action="./search">
<input type="hidden" name="agent" value="${esc(scope.agentId)}">
${scope.userId === null ? '' : `<input type="hidden" name="user" value="${esc(scope.userId)}">`}
<input type="search" name="q" data-testid="search-input" value="${esc(query)}" placeholder="${esc(t('search.placeholder'))}" maxlength="2000">
<button type="submit" data-testid="search-submit">${esc(t('search.submit'))}</button>
</form>
<p class="muted">${esc(t('search.hint'))}</p>`;
  if (hits === null) return form;
  if (hits.length === 0)
    return `${form}<p class="empty" data-testid="search-empty">${esc(t('search.empty'))}</p>`;
  const results = hits
    .map(
      (hit, i) => `<li class="hit" data-hit="${i + 1}" data-memory="${esc(hit.id)}">
<div class="hit-head"><span class="rank">${i + 1}</span>
<a class="memory-link" href="${href('memory', { ...scopeParams(scope), id: hit.id })}">${userText(hit.content)}</a>
<span class="score">${esc(t('search.score', { score: num(hit.score) }))}</span></div>
<div class="muted">${esc(hit.kind)} · ${esc(t(`lifecycle.${hit.lifecycle}` as MessageKey))}</div>
${renderExplanation(ctx, hit.explanation)}
</li>`,
    )
    .join('\n');
  return `${form}<ol class="hits" data-testid="hits">${results}</ol>`;
}
