/** A session's log as recorded, and what recall would put before a model for one of its messages. */
import type { LoggedMessage, MemoryContext } from '@engram/memory';
import { esc, href, userText, when } from './html.js';
import { type PageContext, scopeParams } from './layout.js';

/** Entries the session page shows (the latest). */
export const SESSION_LIMIT = 500;

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

/** The session page: the id form, the log, and the recall of the chosen message when one is chosen. */
export function renderSession(
  ctx: PageContext,
  sessionId: string,
  messages: readonly LoggedMessage[],
  chosen: number | null,
  context: MemoryContext | null,
): string {
  const { t, scope } = ctx;
  const form = `<form class="session" method="get" action="./session">
<input type="hidden" name="agent" value="${esc(scope.agentId)}">
${scope.userId === null ? '' : `<input type="hidden" name="user" value="${esc(scope.userId)}">`}
<label>${esc(t('session.id'))} <input name="session" data-testid="session-input" value="${esc(sessionId)}" maxlength="256"></label>
<button type="submit">${esc(t('session.open'))}</button>
</form>`;
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
