/**
 * The inspector's guards over real node:http on 127.0.0.1: no token, no content; a foreign Host is refused;
 * the `?token=` visit sets an HttpOnly SameSite=Strict cookie and drops the token from the URL; a write from
 * another origin or without the form token changes nothing; stored text is escaped and its bidi and control
 * characters shown, never obeyed.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { isEngramInspectorError } from './errors.js';
import { createInspectorToken, formToken, MIN_TOKEN_LENGTH, TOKEN_BYTES } from './guard.js';
import { createInspectorHandler } from './handler.js';
import { type InspectorServer, startInspector } from './server.js';
import { fixedSource, item } from './source.fixture.js';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('error', reject);
    req.end(options.body);
  });
}

const SECRET_TEXT = 'The deploy key lives in vault path kv/ops';
const servers: InspectorServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(items = [item('m-1', SECRET_TEXT), item('m-2', 'The port is 9090')]) {
  const fixed = fixedSource(items);
  const server = await startInspector({ source: fixed.source, agentId: 'coder' });
  servers.push(server);
  const url = new URL(server.url);
  const token = url.searchParams.get('token') ?? '';
  const base = `http://127.0.0.1:${server.port}`;
  return { ...fixed, server, token, base };
}

/** Follows the token link once and returns the cookie it set. */
async function login(base: string, token: string): Promise<string> {
  const res = await send(`${base}/?token=${token}`);
  expect(res.status).toBe(303);
  const setCookie = res.headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie) ?? '';
  return cookie.split(';')[0] ?? '';
}

describe('the token', () => {
  it('is 256 random bits, and the printed link is on 127.0.0.1 with it', async () => {
    const a = createInspectorToken();
    expect(Buffer.from(a, 'base64url').byteLength).toBe(TOKEN_BYTES);
    expect(a).not.toBe(createInspectorToken());
    const { server, token } = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    expect(token.length).toBeGreaterThanOrEqual(MIN_TOKEN_LENGTH);
  });

  it('without it, every page is 401 and nothing is read', async () => {
    const { base, reads } = await start();
    for (const path of ['/', '/memory?id=m-1', '/search?q=deploy', '/conflicts', '/session', '/backlog']) {
      const res = await send(`${base}${path}`);
      expect(res.status).toBe(401);
      expect(res.body).not.toContain('deploy key');
      expect(res.body).not.toContain('9090');
    }
    const wrong = await send(`${base}/?token=${createInspectorToken()}`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const forged = await send(`${base}/`, {
      headers: { cookie: `engram_inspector_${new URL(base).port}=nope` },
    });
    expect(forged.status).toBe(401);
    expect(reads()).toBe(0);
  });

  it('in the link sets an HttpOnly SameSite=Strict cookie and redirects to the page without it', async () => {
    const { base, token } = await start();
    const first = await send(`${base}/search?q=port&token=${token}`);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/search?q=port');
    const setCookie = String(first.headers['set-cookie']);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    const cookie = setCookie.split(';')[0] ?? '';
    const page = await send(`${base}/search?q=port`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('The port is 9090');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).not.toContain('script-src');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('same-origin');
    expect(page.body).not.toContain(token);
  });

  it('refuses a configured token shorter than 128 bits', () => {
    const { source } = fixedSource([]);
    let error: unknown;
    try {
      createInspectorHandler({ source, token: 'short' });
    } catch (e) {
      error = e;
    }
    expect(isEngramInspectorError(error)).toBe(true);
  });
});

describe('the Host check', () => {
  it('refuses a foreign Host with 421 before reading, even with the cookie', async () => {
    const { base, token, reads } = await start();
    const cookie = await login(base, token);
    const port = new URL(base).port;
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1.evil.example:${port}`,
      'localhost:1',
    ]) {
      const res = await send(`${base}/`, { headers: { host, cookie } });
      expect(res.status).toBe(421);
      expect(res.body).not.toContain('deploy key');
      const link = await send(`${base}/?token=${token}`, { headers: { host } });
      expect(link.status).toBe(421);
      expect(link.headers['set-cookie']).toBeUndefined();
    }
    expect(reads()).toBe(0);
    expect((await send(`${base}/`, { headers: { host: `localhost:${port}`, cookie } })).status).toBe(200);
  });
});

describe('writes', () => {
  async function post(
    base: string,
    cookie: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ) {
    return send(`${base}/action`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  it('refuses a cross-origin POST, one without the form token, and one without the cookie', async () => {
    const { base, token, writes } = await start();
    const cookie = await login(base, token);
    const fields = {
      agent: 'coder',
      op: 'forget',
      id: 'm-1',
      reason: 'stale',
      confirm: 'yes',
      csrf: formToken(token),
    };
    expect((await post(base, cookie, fields, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(base, cookie, fields, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post(base, cookie, fields, { origin: 'null' })).status).toBe(403);
    expect((await post(base, cookie, { ...fields, csrf: 'forged' })).status).toBe(403);
    expect((await post(base, '', fields, { origin: base })).status).toBe(401);
    expect(writes).toEqual([]);
  });

  it('asks to confirm first, then records the change as the inspector with the reason', async () => {
    const { base, token, writes } = await start();
    const cookie = await login(base, token);
    const fields = {
      agent: 'coder',
      op: 'keep',
      id: 'm-2',
      other: 'm-1',
      reason: 'the newer port',
      csrf: formToken(token),
    };
    const same = { origin: base, 'sec-fetch-site': 'same-origin' };
    const confirm = await post(base, cookie, fields, same);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('name="confirm" value="yes"');
    expect(writes).toEqual([]);
    const done = await post(base, cookie, { ...fields, confirm: 'yes' }, same);
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('./memory?agent=coder&id=m-1&done=1');
    expect(writes).toEqual(['delete m-1 by inspector because the newer port']);
    const history = await send(`${base}/memory?agent=coder&id=m-1&done=1`, { headers: { cookie } });
    expect(history.body).toContain('inspector');
    expect(history.body).toContain('the newer port');
    const noReason = await post(base, cookie, { ...fields, reason: ' ', confirm: 'yes' }, same);
    expect(noReason.status).toBe(400);
    expect(writes).toHaveLength(1);
  });
});

describe('stored text', () => {
  it('is escaped, and bidi overrides and control characters are shown as markers, never obeyed', async () => {
    const hostile =
      '<script>alert(1)</script><img src=x onerror=alert(2)> pay \u202Egnp.exe\u202C\u0007 "quoted" & more';
    const { base, token } = await start([item('m-h', hostile, { tags: ['topic:<b>x</b>'] })]);
    const cookie = await login(base, token);
    for (const path of ['/', '/memory?id=m-h', '/search?q=pay']) {
      const page = await send(`${base}${path}`, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(page.body).not.toContain('<script>alert');
      expect(page.body).not.toContain('<img src=x');
      expect(page.body).not.toContain('<b>x</b>');
      expect(page.body).not.toContain('\u202E');
      expect(page.body).not.toContain('\u0007');
      expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(page.body).toContain('<span class="ctl" title="control character">U+202E</span>');
    }
    const memoryPage = await send(`${base}/memory?id=m-h`, { headers: { cookie } });
    expect(memoryPage.body).toContain('U+0007');
    expect(memoryPage.body).toContain('&quot;quoted&quot; &amp; more');
  });
});

describe('language', () => {
  it('follows ?lang=, then the remembered choice, then Accept-Language', async () => {
    const { base, token } = await start();
    const cookie = await login(base, token);
    const zh = await send(`${base}/`, { headers: { cookie, 'accept-language': 'zh-CN,zh;q=0.9' } });
    expect(zh.body).toContain('<html lang="zh-CN">');
    expect(zh.body).toContain('记忆检查器');
    const en = await send(`${base}/?lang=en`, { headers: { cookie, 'accept-language': 'zh-CN' } });
    expect(en.body).toContain('<html lang="en">');
    const remembered = String(en.headers['set-cookie']);
    expect(remembered).toContain('engram_inspector_lang=en');
    const again = await send(`${base}/`, {
      headers: { cookie: `${cookie}; engram_inspector_lang=en`, 'accept-language': 'zh-CN' },
    });
    expect(again.body).toContain('<html lang="en">');
    const refused = await send(`${base}/`, { headers: { 'accept-language': 'zh-CN' } });
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('请打开检查器启动时打印的链接');
  });
});

describe('sessions and the backlog without JavaScript', () => {
  it('lists the sessions as links, and each failed embedding with its error code', async () => {
    const { base, token } = await start();
    const cookie = await login(base, token);
    const list = await send(`${base}/session?agent=coder`, { headers: { cookie } });
    expect(list.status).toBe(200);
    expect(list.body).toContain('data-testid="sessions"');
    expect(list.body).toContain('href="./session?agent=coder&amp;session=chat-1"');
    const zh = await send(`${base}/session?agent=coder&lang=zh-CN`, { headers: { cookie } });
    expect(zh.body).toContain('会话列表');
    const backlog = await send(`${base}/backlog?agent=coder`, { headers: { cookie } });
    expect(backlog.status).toBe(200);
    expect(backlog.body).toContain('<code data-testid="failure-code">ENGRAM_PROVIDER_TIMEOUT</code>');
    expect(backlog.body).toContain('href="./memory?agent=coder&amp;id=m-1"');
    const bad = await send(`${base}/session?agent=coder&after=%00`, { headers: { cookie } });
    expect(bad.status).toBe(400);
  });
});
