/** A session's log as recorded, and what recall would put before a model for one of its messages. */
import type { LoggedMessage, MemoryContext, SessionInfo } from '@engram/memory';
import { esc, href, userText, when } from './html.js';
import { type PageContext, scopeParams } from './layout.js';

/** Entries the session page shows (the latest). */
export const SESSION_LIMIT = 500;
/** Sessions one page of the session list shows. */
export const SESSION_PAGE = 100;

function entryLabel(ctx: PageContext, m: LoggedMessage): string {
  if (m.type === 'tool_call')
    return esc(ctx.t('session.toolCall', { name: '\u0000' })).replace('\u0000', userText(m.toolName ?? ''));
  if (m.type === 'tool_result')
    return esc(ctx.t('session.toolResult', { name: '\u0000' })).replace('\u0000', userText(m.toolName ?? ''));
  return esc(m.role);
}

function block(ctx: PageContext, title: string, text: string, tokens: number, key: string): string {
  return `<section class="block" data-block="${esc(key)}">
<h4>${esc(title)} <span class="muted" data-testid="tokens-${esc(key)}">${esc(ctx.t('session.tokens', { count: tokens }))}</span></h4>
<pre class="block-text">${text === '' ? esc(ctx.t('session.emptyBlock')) : userText(text)}</pre>
</section>`;
}

function sessionForm(ctx: PageContext, sessionId: string): string {
  const { t, scope } = ctx;
  return `<form class="session" method="get" action="./session">
<input type="hidden" name="agent" value="${esc(scope.agentId)}">
${scope.userId === null ? '' : `<input type="hidden" name="user" value="${esc(scope.userId)}">`}
<label>${esc(t('session.id'))} <input name="session" data-testid="session-input" value="${esc(sessionId)}" maxlength="256"></label>
<button type="submit">${esc(t('session.open'))}</button>
</form>`;
}

/**
 * The session list (`memory.sessions`): each logged conversation of the scope with its entry count and first
 * and last time, linked to its page; the id form for one not listed; the next page when this one is full.
 */
export function renderSessionList(
  ctx: PageContext,
  sessions: readonly SessionInfo[],
  after: string | null,
): string {
  const { t, scope } = ctx;
  const rows = sessions
    .map(
      (s) => `<tr data-session-row>
<td><a class="session-link" data-testid="session-link" href="${href('session', { ...scopeParams(scope), session: s.sessionId })}">${userText(s.sessionId)}</a></td>
<td>${esc(s.entries)}</td><td class="muted">${esc(when(s.firstAt))}</td><td class="muted">${esc(when(s.lastAt))}</td>
</tr>`,
    )
    .join('\n');
  const table =
    sessions.length === 0
      ? `<p class="empty" data-testid="sessions-empty">${esc(t('session.listEmpty'))}</p>`
      : `<table class="grid" data-testid="sessions"><thead><tr><th>${esc(t('session.col.id'))}</th><th>${esc(t('session.col.entries'))}</th><th>${esc(t('session.col.first'))}</th><th>${esc(t('session.col.last'))}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
  const last = sessions[sessions.length - 1];
  const pages = [
    after === null ? '' : `<a href="${href('session', scopeParams(scope))}">${esc(t('list.first'))}</a>`,
    sessions.length < SESSION_PAGE || last === undefined
      ? ''
      : `<a data-testid="sessions-next" href="${href('session', { ...scopeParams(scope), after: last.sessionId })}">${esc(t('list.next'))}</a>`,
  ].filter((x) => x !== '');
  return `${sessionForm(ctx, '')}
<h3>${esc(t('session.list'))}</h3>
<p class="muted">${esc(t('session.listHint'))}</p>
${table}
${pages.length === 0 ? '' : `<nav class="pager">${pages.join(' ')}</nav>`}`;
}

/** The session page: the id form, the log, and the recall of the chosen message when one is chosen. */
export function renderSession(
  ctx: PageContext,
  sessionId: string,
  messages: readonly LoggedMessage[],
  chosen: number | null,
  context: MemoryContext | null,
): string {
  const { t, scope } = ctx;
  const form = `<p><a data-testid="sessions-back" href="${href('session', scopeParams(scope))}">${esc(t('session.back'))}</a></p>
${sessionForm(ctx, sessionId)}`;
  const log =
    messages.length === 0
      ? `<p class="empty" data-testid="session-empty">${esc(t('session.empty'))}</p>`
      : `<ol class="log" data-testid="session-log">${messages
          .map(
            (
              m,
            ) => `<li class="entry entry-${esc(m.type)} role-${esc(m.role)}${m.seq === chosen ? ' chosen' : ''}" data-seq="${m.seq}">
<div class="entry-head"><span class="who">${entryLabel(ctx, m)}</span><span class="muted">#${m.seq} · ${esc(when(m.createdAt))}</span>
${m.type === 'message' ? `<a data-testid="recall-${m.seq}" href="${href('session', { ...scopeParams(scope), session: sessionId, at: m.seq })}">${esc(t('session.showRecall'))}</a>` : ''}</div>
<pre class="entry-text">${userText(m.content)}</pre>
</li>`,
          )
          .join('\n')}</ol>`;
  const recall =
    context === null
      ? ''
      : `<section class="recall" data-testid="recall">
<h3>${esc(t('session.recall'))}</h3>
${block(ctx, t('session.core'), context.core, context.tokens.core, 'core')}
${block(ctx, t('session.recallBlock'), context.recall, context.tokens.recall, 'recall')}
<p data-testid="tokens-total">${esc(t('session.total', { count: context.tokens.total }))}</p>
</section>`;
  return `${form}${recall}${log}`;
}
