/** Open conflicts side by side with the facade's corrections, and the confirmation step of every change. */
import type { MemoryConflict, MemoryItem } from '@engram/memory';
import { esc, fieldText, href, userText, when } from './html.js';
import { hiddenScope, type PageContext, scopeParams } from './layout.js';
import type { MessageKey } from './messages.js';

function side(ctx: PageContext, label: string, item: MemoryItem, other: MemoryItem): string {
  const { t } = ctx;
  return `<div class="side" data-memory="${esc(item.id)}">
<h4>${esc(label)}</h4>
<p class="content"><a class="memory-link" href="${href('memory', { ...scopeParams(ctx.scope), id: item.id })}">${userText(item.content)}</a></p>
<p class="muted">${esc(when(item.createdAt))}</p>
<form method="post" action="./action" class="action" data-testid="keep-form">
${hiddenScope(ctx)}<input type="hidden" name="op" value="keep"><input type="hidden" name="id" value="${esc(item.id)}"><input type="hidden" name="other" value="${esc(other.id)}">
<label>${esc(t('action.reason'))} <input name="reason" required maxlength="500"></label>
<button type="submit" data-testid="keep">${esc(t('action.keep'))}</button>
</form>
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

/** The conflicts page: the scope's open conflicts (`memory.conflicts`), both sides with their corrections. */
export function renderConflicts(ctx: PageContext, pairs: readonly MemoryConflict[]): string {
  const { t } = ctx;
  const hint = `<p class="muted">${esc(t('conflicts.hint'))}</p>`;
  if (pairs.length === 0)
    return `${hint}<p class="empty" data-testid="conflicts-empty">${esc(t('conflicts.empty'))}</p>`;
  const items = pairs
    .map(
      ({ reason, createdAt, older, newer }) => `<section class="conflict" data-testid="conflict">
<p class="muted">${esc(t('conflicts.reason', { reason }))} · ${esc(when(createdAt))}</p>
<div class="sides">${side(ctx, t('conflicts.older'), older, newer)}${side(ctx, t('conflicts.newer'), newer, older)}</div>
</section>`,
    )
    .join('\n');
  return `${hint}${items}`;
}

/** A change the page asks to confirm. */
export interface PendingAction {
  readonly op: 'keep' | 'update' | 'forget';
  readonly id: string;
  readonly other: string | null;
  readonly content: string | null;
  readonly reason: string;
}

/** The confirmation step: what will change, shown with the same form fields plus `confirm=yes`. */
export function renderConfirm(
  ctx: PageContext,
  action: PendingAction,
  target: MemoryItem | null,
  other: MemoryItem | null,
): string {
  const { t } = ctx;
  const question = t(`action.confirm${action.op[0]?.toUpperCase()}${action.op.slice(1)}` as MessageKey);
  const shown = [target, other]
    .filter((m): m is MemoryItem => m !== null)
    .map((m) => `<li class="content" data-memory="${esc(m.id)}">${userText(m.content)}</li>`)
    .join('');
  const fields = [
    `<input type="hidden" name="op" value="${esc(action.op)}">`,
    `<input type="hidden" name="id" value="${esc(action.id)}">`,
    action.other === null ? '' : `<input type="hidden" name="other" value="${esc(action.other)}">`,
    action.content === null
      ? ''
      : `<input type="hidden" name="content" value="${fieldText(action.content)}">`,
    `<input type="hidden" name="reason" value="${fieldText(action.reason)}">`,
    '<input type="hidden" name="confirm" value="yes">',
  ].join('');
  const replacement =
    action.content === null ? '' : `<p>${esc(t('action.content'))}: ${userText(action.content)}</p>`;
  return `<p class="question" data-testid="confirm-question">${esc(question)}</p>
<ol class="confirm-items">${shown}</ol>
${replacement}
<p>${esc(t('action.reason'))}: ${userText(action.reason)}</p>
<form method="post" action="./action" data-testid="confirm-form">
${hiddenScope(ctx)}${fields}
<button type="submit" data-testid="confirm">${esc(t('action.confirm'))}</button>
<a href="${href('memory', { ...scopeParams(ctx.scope), id: action.id })}">${esc(t('action.cancel'))}</a>
</form>
<p class="muted">${esc(t('action.recorded'))}</p>`;
}
