/**
 * `POST /action`: a correction through the facade — keep one side of a conflict (forget the other), update a
 * memory's text, forget a memory —, shown for confirmation first and recorded with actor `inspector` and the
 * reason the user gave.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { engramErrorCode } from '@engram/contracts';
import type { MemoryItem } from '@engram/memory';
import { esc, href } from './html.js';
import { layout, type PageContext, scopeParams } from './layout.js';
import { redirect, sendHtml } from './respond.js';
import type { InspectorMemory } from './source.js';
import { type PendingAction, renderConfirm } from './views-conflicts.js';

/** The actor every change from the page is recorded with. */
export const INSPECTOR_ACTOR = 'inspector';
/** Largest form body accepted (a memory's text fits). */
const MAX_FORM_BYTES = 256 * 1024;

/** Reads an `application/x-www-form-urlencoded` body of at most 256 KiB; null for anything else. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.byteLength;
    if (size > MAX_FORM_BYTES) return null;
    chunks.push(buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function pendingOf(form: URLSearchParams): PendingAction | null {
  const op = form.get('op');
  const id = form.get('id') ?? '';
  const reason = (form.get('reason') ?? '').trim();
  if (op !== 'keep' && op !== 'update' && op !== 'forget') return null;
  if (id === '' || id.length > 256 || reason === '' || reason.length > 500) return null;
  const other = form.get('other');
  const content = form.get('content');
  if (op === 'keep' && (other === null || other === '' || other === id || other.length > 256)) return null;
  if (op === 'update' && (content === null || content.trim() === '')) return null;
  return {
    op,
    id,
    other: op === 'keep' ? other : null,
    content: op === 'update' ? content : null,
    reason,
  };
}

/** Answers a correction: the confirmation page, or (with `confirm=yes`) the change and a redirect to its history. */
export async function handleAction(
  req: IncomingMessage,
  res: ServerResponse,
  memory: InspectorMemory,
  ctx: PageContext,
  form: URLSearchParams,
): Promise<void> {
  const { t } = ctx;
  const scope =
    ctx.scope.userId === null ? { agentId: ctx.scope.agentId } : { ...ctx.scope, userId: ctx.scope.userId };
  const action = pendingOf(form);
  const fail = (status: number, message: string): void =>
    sendHtml(
      req,
      res,
      status,
      layout(
        ctx,
        null,
        t('action.confirmTitle'),
        `<p class="notice bad" data-testid="notice">${esc(message)}</p>`,
      ),
    );
  if (action === null) return fail(400, t('action.reasonRequired'));
  const options = { ...scope, actor: INSPECTOR_ACTOR, reason: action.reason };
  if (form.get('confirm') !== 'yes') {
    let target: MemoryItem | null;
    let other: MemoryItem | null = null;
    try {
      target = await memory.get(action.id, scope);
      if (action.other !== null) other = await memory.get(action.other, scope);
    } catch (error) {
      return fail(400, t('action.failed', { code: engramErrorCode(error) ?? 'ENGRAM_UNKNOWN' }));
    }
    if (target === null || (action.other !== null && other === null)) return fail(404, t('memory.notFound'));
    return sendHtml(
      req,
      res,
      200,
      layout(ctx, null, t('action.confirmTitle'), renderConfirm(ctx, action, target, other)),
    );
  }
  let shown: string;
  try {
    if (action.op === 'keep') {
      const forgotten = await memory.delete(action.other ?? '', options);
      if (!forgotten) return fail(404, t('memory.notFound'));
      shown = action.other ?? action.id;
    } else if (action.op === 'update') {
      const updated = await memory.update(action.id, action.content ?? '', options);
      shown = updated.id;
    } else {
      const forgotten = await memory.delete(action.id, options);
      if (!forgotten) return fail(404, t('memory.notFound'));
      shown = action.id;
    }
  } catch (error) {
    // The code is stable and content-free; the error's text is never shown.
    return fail(409, t('action.failed', { code: engramErrorCode(error) ?? 'ENGRAM_UNKNOWN' }));
  }
  // Relative to the action's URL, which sits beside the pages.
  return redirect(
    res,
    href('memory', { ...scopeParams(ctx.scope), id: shown, done: 1 }).replace(/&amp;/g, '&'),
  );
}
