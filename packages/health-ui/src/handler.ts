import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type HealthDto, healthDtoSchema, isValidAgentId } from '@engram/contracts';
import { type HealthUiAsset, healthUiAssets } from './assets.js';
import { EngramHealthUiError } from './errors.js';

/** Construction of {@link createHealthHandler}: where the health data comes from and where the page lives. */
export interface HealthHandlerConfig {
  /**
   * Returns the health DTO for one agent, or for the whole process when `agentId` is null. Called once per
   * `GET /api/health`; a throw or rejection answers 503 with a fixed message (the error itself is never sent).
   */
  readonly getHealth: (agentId: string | null) => Promise<HealthDto> | HealthDto;
  /** Agent ids for the page's picker; `/api/agents` answers an empty list without it. */
  readonly listAgents?: () => Promise<readonly string[]> | readonly string[];
  /** Path prefix the handler is mounted at, e.g. `/health` (default: the root). No trailing slash. */
  readonly basePath?: string;
}

/** A node:http request listener (also usable as Express/Connect middleware without `next`). */
export type HealthHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Wire error codes of the JSON API; the page translates them, the response never carries an error's text. */
export type HealthApiErrorCode = 'notFound' | 'methodNotAllowed' | 'badRequest' | 'unavailable' | 'internal';

/** Most agent ids `/api/agents` returns. */
export const MAX_AGENTS_LISTED = 1000;

const FIXED_MESSAGES: Readonly<Record<HealthApiErrorCode, string>> = Object.freeze({
  notFound: 'Not found.',
  methodNotAllowed: 'Method not allowed.',
  badRequest: 'Bad request.',
  unavailable: 'Health data is unavailable.',
  internal: 'Internal error.',
});

const STATUS: Readonly<Record<HealthApiErrorCode, number>> = Object.freeze({
  notFound: 404,
  methodNotAllowed: 405,
  badRequest: 400,
  unavailable: 503,
  internal: 500,
});

// The page loads only its own scripts, styles and JSON; nothing inline, no frames, no forms.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)*$/;

function commonHeaders(res: ServerResponse): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
}

function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  res.statusCode = status;
  commonHeaders(res);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', payload.byteLength);
  res.end(req.method === 'HEAD' ? undefined : payload);
}

function sendError(req: IncomingMessage, res: ServerResponse, code: HealthApiErrorCode): void {
  if (code === 'methodNotAllowed') res.setHeader('allow', 'GET, HEAD');
  sendJson(req, res, STATUS[code], { error: code, message: FIXED_MESSAGES[code] });
}

function normaliseBasePath(basePath: string | undefined): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '';
  if (!BASE_PATH.test(basePath)) {
    throw new EngramHealthUiError(
      'ENGRAM_HEALTH_UI_INVALID_CONFIG',
      'basePath must look like "/health" (segments of letters, digits, ".", "_", "~", "-"; no trailing slash)',
    );
  }
  return basePath;
}

/** Dedupes, drops invalid ids and caps the list; never throws on odd host data. */
function cleanAgentList(raw: unknown): string[] {
  if (!Array.isArray(raw)) return [];
  const seen = new Set<string>();
  for (const value of raw) {
    if (seen.size >= MAX_AGENTS_LISTED) break;
    if (isValidAgentId(value)) seen.add(value);
  }
  return [...seen];
}

/**
 * Creates a node:http request handler that serves the health page at `/` (below `basePath`), its assets,
 * `GET /api/health?agent=<id>` (the DTO, validated and stripped to the known numeric and enum fields) and
 * `GET /api/agents`; JSON carries `cache-control: no-store`; anything else is 404. A failing `getHealth` or
 * `listAgents` answers 503 with a fixed message: no error text or stack ever leaves the handler.
 */
export function createHealthHandler(config: HealthHandlerConfig): HealthHandler {
  if (typeof config?.getHealth !== 'function') {
    throw new EngramHealthUiError('ENGRAM_HEALTH_UI_INVALID_CONFIG', 'getHealth must be a function');
  }
  if (config.listAgents !== undefined && typeof config.listAgents !== 'function') {
    throw new EngramHealthUiError(
      'ENGRAM_HEALTH_UI_INVALID_CONFIG',
      'listAgents must be a function when given',
    );
  }
  const basePath = normaliseBasePath(config.basePath);
  const { getHealth, listAgents } = config;
  const assets = new Map<string, HealthUiAsset>(healthUiAssets.files.map((asset) => [asset.urlPath, asset]));
  for (const asset of assets.values()) {
    if (!existsSync(asset.filePath)) {
      throw new EngramHealthUiError(
        'ENGRAM_HEALTH_UI_ASSETS_MISSING',
        `health page asset not found: ${asset.filePath} (build @engram/health-ui first)`,
      );
    }
  }
  const cache = new Map<string, Buffer>();

  async function serveAsset(req: IncomingMessage, res: ServerResponse, asset: HealthUiAsset): Promise<void> {
    let body = cache.get(asset.urlPath);
    if (body === undefined) {
      body = await readFile(asset.filePath);
      cache.set(asset.urlPath, body);
    }
    res.statusCode = 200;
    commonHeaders(res);
    res.setHeader('content-type', asset.contentType);
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('content-length', body.byteLength);
    if (asset.urlPath === '/') {
      res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
      res.setHeader('x-frame-options', 'DENY');
    }
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  async function serveHealth(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const agentParam = url.searchParams.get('agent');
    const agentId = agentParam === null || agentParam === '' ? null : agentParam;
    if (agentId !== null && !isValidAgentId(agentId)) return sendError(req, res, 'badRequest');
    let dto: unknown;
    try {
      dto = await getHealth(agentId);
    } catch {
      return sendError(req, res, 'unavailable');
    }
    // Only fields the schema knows reach the page: unknown keys are stripped, malformed data is refused.
    const parsed = healthDtoSchema.safeParse(dto);
    if (!parsed.success) return sendError(req, res, 'unavailable');
    sendJson(req, res, 200, parsed.data);
  }

  async function serveAgents(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let agents: string[] = [];
    if (listAgents !== undefined) {
      try {
        agents = cleanAgentList(await listAgents());
      } catch {
        return sendError(req, res, 'unavailable');
      }
    }
    sendJson(req, res, 200, { agents });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://health.invalid');
    const pathname = url.pathname;
    let route: string;
    if (pathname === basePath || pathname === `${basePath}/`) route = '/';
    else if (basePath !== '' && !pathname.startsWith(`${basePath}/`)) return sendError(req, res, 'notFound');
    else route = pathname.slice(basePath.length);

    const isKnown = route === '/api/health' || route === '/api/agents' || assets.has(route);
    if (!isKnown) return sendError(req, res, 'notFound');
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(req, res, 'methodNotAllowed');

    if (route === '/') {
      // Relative asset URLs need the page to end in "/": redirect `/health` (or an Express mount's bare path).
      const publicUrl = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
      // Leading slashes collapse to one, so the Location can never become a protocol-relative URL.
      const publicPath = new URL(publicUrl, 'http://health.invalid').pathname.replace(/^\/+/, '/');
      if (!publicPath.endsWith('/')) {
        res.statusCode = 308;
        commonHeaders(res);
        res.setHeader('location', `${publicPath}/${url.search}`);
        res.end();
        return;
      }
    }
    if (route === '/api/health') return serveHealth(req, res, url);
    if (route === '/api/agents') return serveAgents(req, res);
    const asset = assets.get(route);
    if (asset !== undefined) return serveAsset(req, res, asset);
    return sendError(req, res, 'notFound');
  }

  return (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(req, res, 'internal');
      else res.destroy();
    });
  };
}
