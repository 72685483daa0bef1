/**
 * The inspector's node:http request handler: server-rendered pages over a memory file, behind the guards of
 * `guard.ts`. Nothing it reads is logged or put in an error; a failing read answers a fixed text.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { engramErrorCode, isValidAgentId } from '@engram/contracts';
import { handleAction, readForm } from './actions.js';
import { type InspectorAsset, inspectorAssets } from './assets.js';
import { EngramInspectorError } from './errors.js';
import {
  checkToken,
  cookieName,
  formToken,
  hostAllowed,
  LANG_COOKIE,
  normaliseAllowedHosts,
  readCookie,
  sameOriginWrite,
  sameSecret,
  tokenCookie,
} from './guard.js';
import { chooseLocale, createTranslator, isLocale, type Locale, type Translate } from './i18n.js';
import { layout, type PageContext, type PageScope, plainPage } from './layout.js';
import type { MessageKey } from './messages.js';
import { redirect, securityHeaders, sendHtml } from './respond.js';
import type { InspectorSource } from './source.js';
import { FAILURES_PAGE, renderBacklog } from './views-backlog.js';
import { renderConflicts } from './views-conflicts.js';
import { listPage, readFilters, renderList, renderMemory } from './views-memories.js';
import { renderSearch, SEARCH_LIMIT } from './views-search.js';
import { renderSession, renderSessionList, SESSION_LIMIT, SESSION_PAGE } from './views-session.js';

/** Construction of {@link createInspectorHandler}. */
export interface InspectorHandlerConfig {
  /** Where the pages read (and the confirmed corrections write). */
  readonly source: InspectorSource;
  /** The secret of the link: `createInspectorToken()` (256 random bits); at least 128 bits of base64url. */
  readonly token: string;
  /** The agent shown first (default `'default'`); the page can switch. */
  readonly agentId?: string;
  /** The user shown first (default: the whole agent); the page can switch. */
  readonly userId?: string;
  /** Path prefix the handler is mounted at, e.g. `/inspect` (default: the root). No trailing slash. */
  readonly basePath?: string;
  /** Host header values accepted besides loopback on the request's port, as the health page's `allowedHosts`. */
  readonly allowedHosts?: readonly string[];
}

/** A node:http request listener. */
export type InspectorHandler = (req: IncomingMessage, res: ServerResponse) => void;

const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)*$/;
const ROUTES: ReadonlySet<string> = new Set([
  '/',
  '/memory',
  '/search',
  '/conflicts',
  '/session',
  '/backlog',
]);

function normaliseBasePath(basePath: string | undefined): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '';
  if (!BASE_PATH.test(basePath)) {
    throw new EngramInspectorError(
      'ENGRAM_INSPECTOR_INVALID_CONFIG',
      'basePath must look like "/inspect" (segments of letters, digits, ".", "_", "~", "-"; no trailing slash)',
    );
  }
  return basePath;
}

function scopeOf(query: URLSearchParams, defaults: PageScope): PageScope | null {
  const agent = query.get('agent');
  const user = query.get('user');
  const agentId = agent === null || agent.trim() === '' ? defaults.agentId : agent.trim();
  const userId = user === null ? defaults.userId : user.trim() === '' ? null : user.trim();
  if (!isValidAgentId(agentId)) return null;
  if (userId !== null && !isValidAgentId(userId)) return null;
  return { agentId, userId };
}

function scopeCall(scope: PageScope): { agentId: string; userId?: string } {
  return scope.userId === null
    ? { agentId: scope.agentId }
    : { agentId: scope.agentId, userId: scope.userId };
}

/** The facade's answer for "not in this scope" (null, false or this code). */
function notFound(error: unknown): boolean {
  const code = engramErrorCode(error);
  return code === 'ENGRAM_MEMORY_NOT_FOUND' || code === 'ENGRAM_STORE_NOT_FOUND';
}

/**
 * Creates the inspector's request handler: pages at `/` (memories), `/memory?id=`, `/search?q=`, `/conflicts`,
 * `/session?session=`, `/backlog` and `POST /action` (a correction, confirmed first), plus its stylesheet. It
 * answers only requests whose Host names it (421 otherwise) and that carry the token — `?token=` once, which
 * sets an HttpOnly SameSite=Strict cookie and redirects to the same page without it, then the cookie (401
 * otherwise) —, and refuses a POST from another origin or without the page's form token (403).
 */
export function createInspectorHandler(config: InspectorHandlerConfig): InspectorHandler {
  if (typeof config?.source?.memory !== 'object' || config.source.memory === null) {
    throw new EngramInspectorError(
      'ENGRAM_INSPECTOR_INVALID_CONFIG',
      'source.memory must be a memory (createMemory)',
    );
  }
  const token = checkToken(config.token);
  const csrf = formToken(token);
  const basePath = normaliseBasePath(config.basePath);
  const allowedHosts = normaliseAllowedHosts(config.allowedHosts);
  const defaults: PageScope = { agentId: config.agentId ?? 'default', userId: config.userId ?? null };
  if (!isValidAgentId(defaults.agentId) || (defaults.userId !== null && !isValidAgentId(defaults.userId))) {
    throw new EngramInspectorError('ENGRAM_INSPECTOR_INVALID_CONFIG', 'agentId and userId must be valid ids');
  }
  const { source } = config;
  const memory = source.memory;
  const assets = new Map<string, InspectorAsset>(inspectorAssets.map((a) => [a.urlPath, a]));
  for (const asset of assets.values()) {
    if (!existsSync(asset.filePath)) {
      throw new EngramInspectorError(
        'ENGRAM_INSPECTOR_ASSETS_MISSING',
        `inspector asset not found: ${asset.filePath}`,
      );
    }
  }
  const cache = new Map<string, Buffer>();

  async function serveAsset(req: IncomingMessage, res: ServerResponse, asset: InspectorAsset): Promise<void> {
    let body = cache.get(asset.urlPath);
    if (body === undefined) {
      body = await readFile(asset.filePath);
      cache.set(asset.urlPath, body);
    }
    res.statusCode = 200;
    securityHeaders(res);
    res.setHeader('content-type', asset.contentType);
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('content-length', body.byteLength);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  function refuse(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    locale: Locale,
    key: MessageKey,
  ): void {
    if (status === 405) res.setHeader('allow', 'GET, HEAD, POST');
    const t = createTranslator(locale);
    sendHtml(req, res, status, plainPage(locale, t, t(key)));
  }

  async function page(
    req: IncomingMessage,
    res: ServerResponse,
    route: string,
    url: URL,
    ctx: PageContext,
  ): Promise<void> {
    const { t, scope } = ctx;
    const query = url.searchParams;
    const call = scopeCall(scope);
    const send = (active: Parameters<typeof layout>[1], title: string, body: string): void =>
      sendHtml(req, res, 200, layout(ctx, active, title, body));
    if (route === '/') {
      const filters = readFilters(query);
      return send(
        'memories',
        t('nav.memories'),
        renderList(ctx, filters, await listPage(memory, ctx, filters)),
      );
    }
    if (route === '/memory') {
      const id = query.get('id') ?? '';
      if (id === '' || id.length > 256) return refuse(req, res, 400, ctx.locale, 'error.badRequest');
      const item = await memory.get(id, call);
      let history: Awaited<ReturnType<typeof memory.history>> = [];
      try {
        history = await memory.history(id, call);
      } catch (error) {
        if (!notFound(error)) throw error;
      }
      if (item === null && history.length === 0) {
        return sendHtml(
          req,
          res,
          404,
          layout(ctx, null, t('memory.title'), renderMemory(ctx, null, [], null)),
        );
      }
      const notice = query.get('done') === '1' ? t('action.recorded') : null;
      return send(null, t('memory.title'), renderMemory(ctx, item, history, notice));
    }
    if (route === '/search') {
      const q = (query.get('q') ?? '').slice(0, 2000);
      const hits = q.trim() === '' ? null : await memory.search(q, { ...call, limit: SEARCH_LIMIT });
      return send('search', t('nav.search'), renderSearch(ctx, q, hits));
    }
    if (route === '/conflicts') {
      return send('conflicts', t('conflicts.title'), renderConflicts(ctx, await memory.conflicts(call)));
    }
    if (route === '/session') {
      const asked = (query.get('session') ?? '').trim();
      if (asked === '') {
        // No session named: the list of the scope's sessions, each linked.
        const after = (query.get('after') ?? '').trim();
        if (after !== '' && !isValidAgentId(after))
          return refuse(req, res, 400, ctx.locale, 'error.badRequest');
        const sessions = await memory.sessions({
          ...call,
          limit: SESSION_PAGE,
          ...(after === '' ? {} : { afterSessionId: after }),
        });
        return send(
          'session',
          t('session.title'),
          renderSessionList(ctx, sessions, after === '' ? null : after),
        );
      }
      const sessionId = asked;
      if (!isValidAgentId(sessionId)) return refuse(req, res, 400, ctx.locale, 'error.badRequest');
      const messages = await memory.messages({ ...call, sessionId, limit: SESSION_LIMIT });
      const at = Number(query.get('at'));
      const chosen = messages.find((m) => m.seq === at && m.type === 'message') ?? null;
      const context = chosen === null ? null : await memory.context(chosen.content, { ...call, sessionId });
      return send(
        'session',
        t('session.title'),
        renderSession(ctx, sessionId, messages, chosen?.seq ?? null, context),
      );
    }
    // '/backlog'
    const after = (query.get('after') ?? '').trim();
    if (after.length > 256) return refuse(req, res, 400, ctx.locale, 'error.badRequest');
    const [health, about, failures] = await Promise.all([
      memory.health({ agentId: scope.agentId }),
      source.about === undefined ? null : source.about(),
      memory.embeddingFailures({
        ...call,
        limit: FAILURES_PAGE,
        ...(after === '' ? {} : { afterId: after }),
      }),
    ]);
    return send(
      'backlog',
      t('backlog.title'),
      renderBacklog(ctx, health, about, { failures, after: after === '' ? null : after }),
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://inspector.invalid');
    const query = url.searchParams;
    const langCookie = readCookie(req, LANG_COOKIE);
    const accept = typeof req.headers['accept-language'] === 'string' ? req.headers['accept-language'] : null;
    const locale = chooseLocale(query.get('lang'), langCookie, accept);
    if (!hostAllowed(req, allowedHosts)) return refuse(req, res, 421, locale, 'error.misdirected');

    const pathname = url.pathname;
    let route: string;
    if (pathname === basePath || pathname === `${basePath}/`) route = '/';
    else if (basePath !== '' && !pathname.startsWith(`${basePath}/`))
      return refuse(req, res, 404, locale, 'error.notFound');
    else route = pathname.slice(basePath.length);

    const asset = assets.get(route);
    // The stylesheet and icon hold nothing of the memory: they load without the token (the refusal pages use them).
    if (asset !== undefined) {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return refuse(req, res, 405, locale, 'error.badRequest');
      return serveAsset(req, res, asset);
    }
    if (!ROUTES.has(route) && route !== '/action') return refuse(req, res, 404, locale, 'error.notFound');

    // The token: in the link once, then in the cookie that link sets.
    const presented = query.get('token');
    const cookiePath = `${basePath}/`;
    if (presented !== null) {
      if (!sameSecret(presented, token)) return refuse(req, res, 401, locale, 'error.unauthorized');
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return refuse(req, res, 405, locale, 'error.badRequest');
      query.delete('token');
      const rest = query.toString();
      const target = `${cookiePath}${route === '/' ? '' : route.slice(1)}${rest === '' ? '' : `?${rest}`}`;
      return redirect(res, target, [tokenCookie(req, token, cookiePath)]);
    }
    if (!sameSecret(readCookie(req, cookieName(req)), token))
      return refuse(req, res, 401, locale, 'error.unauthorized');

    const cookies: string[] = [];
    if (isLocale(query.get('lang')) && query.get('lang') !== langCookie) {
      cookies.push(`${LANG_COOKIE}=${query.get('lang')}; HttpOnly; SameSite=Strict; Path=${cookiePath}`);
    }
    if (cookies.length > 0) res.setHeader('set-cookie', cookies);

    if (route === '/action') {
      if (req.method !== 'POST') return refuse(req, res, 405, locale, 'error.badRequest');
      if (!sameOriginWrite(req)) return refuse(req, res, 403, locale, 'error.forbidden');
      const form = await readForm(req);
      if (form === null) return refuse(req, res, 400, locale, 'error.badRequest');
      if (!sameSecret(form.get('csrf'), csrf)) return refuse(req, res, 403, locale, 'error.forbidden');
      const scope = scopeOf(form, defaults);
      if (scope === null) return refuse(req, res, 400, locale, 'error.badRequest');
      const ctx = context(locale, scope, route, query);
      return handleAction(req, res, memory, ctx, form);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return refuse(req, res, 405, locale, 'error.badRequest');
    const scope = scopeOf(query, defaults);
    if (scope === null) return refuse(req, res, 400, locale, 'error.badRequest');
    const ctx = context(locale, scope, route, query);
    try {
      await page(req, res, route, url, ctx);
    } catch (error) {
      // A caller's mistake the facade names (a bad id, an option out of range) is 400; anything else 503.
      // Neither answer carries the error: its text may quote what was stored or asked.
      const code = engramErrorCode(error);
      if (code === 'ENGRAM_MEMORY_INVALID_INPUT') return refuse(req, res, 400, locale, 'error.badRequest');
      return refuse(req, res, 503, locale, 'error.unavailable');
    }
  }

  function context(locale: Locale, scope: PageScope, route: string, query: URLSearchParams): PageContext {
    const t: Translate = createTranslator(locale);
    return { t, locale, scope, csrf, route: route === '/' ? '' : route.slice(1), query };
  }

  return (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent)
        sendHtml(req, res, 500, '<!doctype html><title>Engram inspector</title><p>Internal error.</p>');
      else res.destroy();
    });
  };
}
