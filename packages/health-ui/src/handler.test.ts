import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createEmptySnapshot, createHealthDto, type HealthDto, RETRIEVAL_PURPOSES } from '@engram/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { isEngramHealthUiError } from './errors.js';
import { createHealthHandler, type HealthHandlerConfig } from './handler.js';
import { startHealthServer } from './server.js';

function dto(agentId?: string): HealthDto {
  const zeros = { event: 0, fact: 0, semantic: 0, episodic: 0, reflection: 0, persona: 0, skill: 0 };
  return createHealthDto(
    {
      totals: { memories: 12, events: 5, facts: 3, skills: 1 },
      byKind: { ...zeros, event: 5, fact: 3, semantic: 4 },
      byLifecycle: { active: 11, archived: 1, superseded: 0, conflicted: 0 },
      byEmbeddingState: { pending: 2, ready: 10, error: 0, ftsOnly: 0 },
    },
    createEmptySnapshot(agentId, { generatedAt: 1_700_000_000_000 }),
  );
}

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

/** A real node:http server on loopback around the handler; `wrap` may adapt the request (Express-like mounts). */
async function serve(
  config: HealthHandlerConfig,
  wrap?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void,
): Promise<string> {
  const handler = createHealthHandler(config);
  const server = createServer((req, res) =>
    wrap ? wrap(req, res, () => handler(req, res)) : handler(req, res),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('routes', () => {
  it('serves the page, its stylesheet and its modules with the right types and a strict CSP', async () => {
    const base = await serve({ getHealth: () => dto() });
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain('src="./app/main.js"');
    expect(html).toContain('href="./health.css"');

    const css = await fetch(`${base}/health.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toContain('.topbar');

    const js = await fetch(`${base}/app/main.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await js.text()).toContain('./render.js');
  });

  it('answers the health DTO as no-store JSON and passes the agent (or null) to getHealth', async () => {
    const asked: (string | null)[] = [];
    const base = await serve({
      getHealth: (agentId) => {
        asked.push(agentId);
        return dto(agentId ?? undefined);
      },
    });
    const all = await fetch(`${base}/api/health`);
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(all.headers.get('cache-control')).toBe('no-store');
    expect(await all.json()).toEqual(dto());

    const one = await fetch(`${base}/api/health?agent=${encodeURIComponent('agent 甲')}`);
    expect(one.status).toBe(200);
    expect(((await one.json()) as HealthDto).runtime.agentId).toBe('agent 甲');
    await fetch(`${base}/api/health?agent=`);
    expect(asked).toEqual([null, 'agent 甲', null]);
  });

  it('lists agents deduplicated, without invalid ids, and an empty list without listAgents', async () => {
    const withList = await serve({
      getHealth: () => dto(),
      listAgents: async () => ['b', 'a', 'b', '', 'x'.repeat(300), 'bad\u0000id', 'c'],
    });
    const res = await fetch(`${withList}/api/agents`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ agents: ['b', 'a', 'c'] });

    const without = await serve({ getHealth: () => dto() });
    expect(await (await fetch(`${without}/api/agents`)).json()).toEqual({ agents: [] });
  });

  it('answers 404 for anything else, 405 for other methods and serves HEAD without a body', async () => {
    const base = await serve({ getHealth: () => dto() });
    for (const path of [
      '/nope',
      '/app/missing.js',
      '/app/../assets.js',
      '/api/health/extra',
      '/dist/index.js',
      '/app/main.ts',
    ]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ error: 'notFound', message: 'Not found.' });
    }
    const post = await fetch(`${base}/api/health`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${base}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('refuses an invalid agent id with 400 and never calls getHealth for it', async () => {
    let calls = 0;
    const base = await serve({
      getHealth: () => {
        calls += 1;
        return dto();
      },
    });
    expect((await fetch(`${base}/api/health?agent=${'x'.repeat(257)}`)).status).toBe(400);
    expect((await fetch(`${base}/api/health?agent=a%0Ab`)).status).toBe(400);
    expect(calls).toBe(0);
  });

  it('checks agent ids with the contracts rule: blank ids and lone surrogates are refused too', async () => {
    let calls = 0;
    const base = await serve({
      getHealth: () => {
        calls += 1;
        return dto();
      },
      listAgents: () => ['ok', '   ', 'half\uD800', 'x'.repeat(256)],
    });
    expect((await fetch(`${base}/api/health?agent=%20%20`)).status).toBe(400);
    expect((await fetch(`${base}/api/health?agent=a%00b`)).status).toBe(400);
    // The longest id the rule allows still reaches getHealth.
    expect((await fetch(`${base}/api/health?agent=${'x'.repeat(256)}`)).status).toBe(200);
    expect(calls).toBe(1);
    expect(await (await fetch(`${base}/api/agents`)).json()).toEqual({ agents: ['ok', 'x'.repeat(256)] });
  });
});

describe('the closed enums module', () => {
  // Found from the contracts package's own root, not through the handler's resolution.
  const contractsRoot = dirname(createRequire(import.meta.url).resolve('@engram/contracts/package.json'));
  const built = join(contractsRoot, 'dist', 'enums.js');

  it('is served to the page byte for byte as the contracts build emitted it', async () => {
    const base = await serve({ getHealth: () => dto(), basePath: '/health' });
    const res = await fetch(`${base}/health/app/contracts/enums.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const served = Buffer.from(await res.arrayBuffer());
    const expected = readFileSync(built);
    expect(served.byteLength).toBeGreaterThan(500);
    expect(served.equals(expected)).toBe(true);
  });

  it('is the module the page imports, and carries the tuples the DTO is keyed by', async () => {
    const base = await serve({ getHealth: () => dto() });
    const render = await (await fetch(`${base}/app/render-retrieval.js`)).text();
    expect(render).toContain("from './contracts/enums.js'");
    expect((await fetch(`${base}/app/enums.js`)).status).toBe(404);
    const module = (await import(pathToFileURL(built).href)) as { RETRIEVAL_PURPOSES?: unknown };
    expect(module.RETRIEVAL_PURPOSES).toEqual(RETRIEVAL_PURPOSES);
    expect(Object.keys(dto().runtime.agent.retrieval).sort()).toEqual([...RETRIEVAL_PURPOSES].sort());
  });
});

describe('failures never leak', () => {
  const secret = 'SELECT content FROM memories WHERE text = "my bank PIN is 4921"';

  it('answers 503 with a fixed message when getHealth throws or rejects', async () => {
    const sync = await serve({
      getHealth: () => {
        throw new Error(secret);
      },
    });
    const async = await serve({ getHealth: async () => Promise.reject(new TypeError(secret)) });
    for (const base of [sync, async]) {
      const res = await fetch(`${base}/api/health?agent=a`);
      expect(res.status).toBe(503);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: 'unavailable', message: 'Health data is unavailable.' });
      expect(text).not.toContain('SELECT');
      expect(text).not.toContain('4921');
      expect(text).not.toMatch(/\bat\s+\S+:\d+/);
    }
  });

  it('refuses a DTO that carries anything beyond the known numeric and enum fields', async () => {
    const leaky = { ...dto(), store: { ...dto().store, lastContent: secret } };
    const base = await serve({ getHealth: () => leaky as unknown as HealthDto });
    const res = await fetch(`${base}/api/health`);
    expect(res.status).toBe(503);
    expect(await res.text()).not.toContain('4921');
  });

  it('serves every process listed, and refuses a process entry that carries text', async () => {
    const runtime = createEmptySnapshot(undefined, { generatedAt: 7 });
    const processes = {
      list: [{ id: 'c'.repeat(32), self: false, startedAt: 1, beatAt: 2, runtime }],
      skipped: 0,
    };
    const listed = await serve({ getHealth: () => ({ ...dto(), processes }) });
    const ok = await fetch(`${listed}/api/health`);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as HealthDto).processes).toEqual(processes);

    const leaky = { list: [{ ...processes.list[0], id: `/srv/${secret}/memory.db` }], skipped: 0 };
    const base = await serve({ getHealth: () => ({ ...dto(), processes: leaky }) as unknown as HealthDto });
    const res = await fetch(`${base}/api/health`);
    expect(res.status).toBe(503);
    expect(await res.text()).not.toContain('4921');
  });

  it('answers 503 when listAgents fails', async () => {
    const base = await serve({
      getHealth: () => dto(),
      listAgents: () => {
        throw new Error(secret);
      },
    });
    const res = await fetch(`${base}/api/agents`);
    expect(res.status).toBe(503);
    expect(await res.text()).not.toContain('SELECT');
  });
});

describe('mounting', () => {
  it('serves below basePath, redirects the bare path to its trailing slash and 404s outside it', async () => {
    const base = await serve({ getHealth: () => dto(), basePath: '/ops/health' });
    const bare = await fetch(`${base}/ops/health?lang=en`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/ops/health/?lang=en');
    expect((await fetch(`${base}/ops/health/`)).status).toBe(200);
    expect((await fetch(`${base}/ops/health/app/main.js`)).status).toBe(200);
    expect((await fetch(`${base}/ops/health/api/health`)).status).toBe(200);
    expect((await fetch(`${base}/api/health`)).status).toBe(404);
    expect((await fetch(`${base}/ops/healthz/api/health`)).status).toBe(404);
  });

  it('redirects an Express-style mount (originalUrl without the trailing slash)', async () => {
    const base = await serve({ getHealth: () => dto() }, (req, _res, next) => {
      // What Express does for app.use('/health', handler): strip the mount path, keep originalUrl.
      const url = req.url ?? '/';
      if (!url.startsWith('/health')) return next();
      Object.assign(req, { originalUrl: url, url: url.slice('/health'.length) || '/' });
      next();
    });
    const bare = await fetch(`${base}/health`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/health/');
    expect((await fetch(`${base}/health/`)).status).toBe(200);
    expect((await fetch(`${base}/health/api/agents`)).status).toBe(200);
  });

  it('rejects an invalid configuration with a typed error', () => {
    for (const config of [
      { getHealth: () => dto(), basePath: 'health' },
      { getHealth: () => dto(), basePath: '/health/' },
      { getHealth: () => dto(), basePath: '/a b' },
      { getHealth: 'nope' },
      { getHealth: () => dto(), listAgents: 42 },
    ]) {
      let caught: unknown;
      try {
        createHealthHandler(config as unknown as HealthHandlerConfig);
      } catch (error) {
        caught = error;
      }
      expect(isEngramHealthUiError(caught), JSON.stringify(config.basePath ?? null)).toBe(true);
      expect((caught as { code: string }).code).toBe('ENGRAM_HEALTH_UI_INVALID_CONFIG');
    }
  });
});

describe('startHealthServer', () => {
  it('listens on 127.0.0.1, serves the page at its url and stops on close', async () => {
    const server = await startHealthServer({ getHealth: () => dto(), basePath: '/health' });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/health/`);
    const res = await fetch(server.url);
    expect(res.status).toBe(200);
    expect(await (await fetch(`${server.url}api/health`)).json()).toEqual(dto());
    await server.close();
    await expect(fetch(server.url)).rejects.toThrow();
  });

  it('fails with a typed error when the port is taken', async () => {
    const first = await startHealthServer({ getHealth: () => dto() });
    try {
      await expect(startHealthServer({ getHealth: () => dto(), port: first.port })).rejects.toMatchObject({
        code: 'ENGRAM_HEALTH_UI_LISTEN_FAILED',
      });
    } finally {
      await first.close();
    }
  });
});

/** A GET with an explicit Host header (what a DNS-rebinding page's browser sends). */
function getWithHost(base: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('host check (DNS rebinding)', () => {
  it('answers a foreign Host with 421 and never asks for agent ids or health data', async () => {
    let reads = 0;
    const base = await serve({
      getHealth: () => {
        reads += 1;
        return dto();
      },
      listAgents: () => {
        reads += 1;
        return ['secret-agent'];
      },
    });
    const port = new URL(base).port;
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.evil.example:${port}`]) {
      for (const path of ['/api/agents', '/api/health', '/']) {
        const res = await getWithHost(base, path, host);
        expect(res.status).toBe(421);
        expect(res.body).not.toContain('secret-agent');
        expect(JSON.parse(res.body)).toEqual({
          error: 'misdirected',
          message: 'This server does not answer for that host.',
        });
      }
    }
    // A loopback name on another port is another server: refused as well.
    expect((await getWithHost(base, '/api/agents', 'localhost:1')).status).toBe(421);
    expect(reads).toBe(0);
  });

  it('accepts the loopback names on its own port', async () => {
    const base = await serve({ getHealth: () => dto(), listAgents: () => ['coder'] });
    const port = new URL(base).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      const res = await getWithHost(base, '/api/agents', host);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ agents: ['coder'] });
    }
  });

  it('accepts configured hosts, with or without a port, and refuses a malformed allowedHosts', async () => {
    const base = await serve({
      getHealth: () => dto(),
      listAgents: () => ['coder'],
      allowedHosts: ['health.internal', 'proxy.example:8443'],
    });
    expect((await getWithHost(base, '/api/agents', 'health.internal')).status).toBe(200);
    expect((await getWithHost(base, '/api/agents', 'Health.Internal:9999')).status).toBe(200);
    expect((await getWithHost(base, '/api/agents', 'proxy.example:8443')).status).toBe(200);
    expect((await getWithHost(base, '/api/agents', 'proxy.example:8444')).status).toBe(421);
    expect((await getWithHost(base, '/api/agents', 'evil.example')).status).toBe(421);
    let error: unknown;
    try {
      createHealthHandler({ getHealth: () => dto(), allowedHosts: ['http://x/'] });
    } catch (e) {
      error = e;
    }
    expect(isEngramHealthUiError(error)).toBe(true);
    expect((error as { code: string }).code).toBe('ENGRAM_HEALTH_UI_INVALID_CONFIG');
  });
});
