/**
 * The health page as `engram serve` composes it: a real SQLite store, the retriever, the deterministic
 * embedder and the diagnostics collector wired by `openEngine`, served by `serveHealthPage`, read in Debian's
 * Chromium through playwright-core. It checks that what the store and the collector really counted after a
 * small workload is what the page shows, that a refresh shows a new search, and that no memory content or
 * query text reaches the page. (The page's rendering of every figure is tested in @engram/health-ui.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Engine as Engram, openEngine } from '@engram/memory/compose';
import { chromiumLaunchOptions } from '@engram/test-support';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedHealthServer, serveHealthPage } from './serve.js';

const ACTIVE = 'agent-alpha';
const SECOND = 'agent-beta';
const IDLE = 'agent-idle';

const CONTENT: readonly string[] = [
  'The user prefers pnpm over npm for every TypeScript repository.',
  'The dev server listens on port 8080; the API gateway on port 3000.',
  'Run the tests with `pnpm test:memory` before opening a pull request.',
  'src/store/sqlite-store.ts owns every SQL statement of the project.',
  '用户喜欢在周末整理项目文档，并使用中文撰写会议纪要。',
  '部署脚本位于 scripts/deploy.sh，需要先设置环境变量 DEPLOY_TOKEN。',
  '数据库文件保存在 .engram 目录下，每个应用一个文件。',
  'The build uses tsc -b with project references; no bundler.',
  'Prefer small pure functions; avoid classes unless state is needed.',
  'The health page must never show memory content or queries.',
];
const QUERIES = [
  'pnpm',
  'which port does the dev server use',
  '项目文档',
  '部署脚本',
  'sqlite-store.ts',
  'tests',
];

let dir: string;
let engram: Engram;
let served: StartedHealthServer;
let browser: Browser | undefined;

async function metric(page: Page, path: string): Promise<string | null> {
  return page.locator(`[data-metric="${path}"]`).first().textContent();
}

async function load(page: Page, action: () => Promise<unknown>): Promise<void> {
  await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/api/health') && r.status() === 200),
    action(),
  ]);
  // A selector, not a predicate: nothing is evaluated in the page (its CSP forbids eval) and this package
  // type-checks without the DOM library.
  await page.locator('body[data-state="ready"]').waitFor({ state: 'attached' });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-demo-health-'));
  engram = await openEngine({ path: join(dir, 'memory.db'), env: {}, embedder: 'deterministic' });
  // Eight of ten rows get their vector now; two stay pending until a drain.
  for (const [i, content] of CONTENT.entries()) {
    await engram.store.insertMemory({
      agentId: ACTIVE,
      kind: i % 3 === 0 ? 'fact' : 'semantic',
      content,
      importance: 0.4 + (i % 5) / 10,
    });
  }
  await engram.drain({ agentId: ACTIVE });
  await engram.store.insertMemories(
    [
      'Queued for the next drain: the staging database is read-only.',
      'Queued too: deploys freeze on Fridays.',
    ].map((content) => ({ agentId: ACTIVE, kind: 'fact' as const, content })),
  );
  for (const content of CONTENT.slice(0, 4)) {
    await engram.store.insertMemory({ agentId: SECOND, kind: 'episodic', content });
  }
  await engram.drain({ agentId: SECOND });
  await engram.store.insertMemory({
    agentId: IDLE,
    kind: 'fact',
    content: 'An agent that has never searched.',
  });

  for (let round = 0; round < 4; round++) {
    for (const q of QUERIES) await engram.retriever.search(ACTIVE, q);
  }
  await engram.retriever.search(ACTIVE, '   ');
  await engram.retriever.search(SECOND, 'port 8080');

  served = await serveHealthPage(engram, 0);
  browser = await chromium.launch(chromiumLaunchOptions());
});

afterAll(async () => {
  await browser?.close();
  await served?.server.close();
  await engram?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the health page of a composed Engram in Chromium', () => {
  it('shows what the store and the collector counted, refreshes, and never shows content', async () => {
    if (browser === undefined) throw new Error('browser did not start');
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.name));

    await load(page, () => page.goto(served.server.url));
    const options = await page
      .locator('[data-testid=agent-select] option')
      .evaluateAll((o) => o.map((x) => (x as unknown as { value: string }).value));
    expect(new Set(options)).toEqual(new Set(['', ACTIVE, SECOND, IDLE]));

    await load(page, () => page.selectOption('[data-testid=agent-select]', ACTIVE));
    // 4 rounds of 6 queries and one blank query: 25 searches, one of them an empty query.
    expect(await metric(page, 'runtime.agent.retrieval.search.operations')).toBe('25');
    expect(await metric(page, 'runtime.agent.retrieval.search.outcomes.emptyQuery')).toBe('1');
    expect(await metric(page, 'runtime.agent.retrieval.search.outcomes.completed')).toBe('24');
    expect(await metric(page, 'store.totals.memories')).toBe('12');
    expect(await metric(page, 'store.byEmbeddingState.pending')).toBe('2');
    expect(await metric(page, 'store.byEmbeddingState.ready')).toBe('10');
    const p95 = await metric(page, 'runtime.agent.retrieval.search.latency.total.p95');
    expect(p95).toMatch(/\d/);
    expect(p95).not.toBe('—');

    const bodyText = (await page.locator('body').textContent()) ?? '';
    for (const text of [...CONTENT.map((c) => c.slice(0, 12)), ...QUERIES.filter((q) => q.length > 4)]) {
      expect(bodyText).not.toContain(text);
    }

    // A search made after the page loaded shows up on refresh.
    await engram.retriever.search(ACTIVE, 'pnpm');
    await load(page, () => page.click('[data-testid=refresh]'));
    expect(await metric(page, 'runtime.agent.retrieval.search.operations')).toBe('26');

    // The second agent: its own rows and its one search.
    await load(page, () => page.selectOption('[data-testid=agent-select]', SECOND));
    expect(await metric(page, 'store.totals.memories')).toBe('4');
    expect(await metric(page, 'runtime.agent.retrieval.search.operations')).toBe('1');

    // An agent that never searched: no latency sample, an em dash rather than 0 ms.
    await load(page, () => page.selectOption('[data-testid=agent-select]', IDLE));
    expect(await metric(page, 'store.totals.memories')).toBe('1');
    expect(await metric(page, 'runtime.agent.retrieval.search.latency.total.p95')).toBe('—');

    expect(errors).toEqual([]);
    await context.close();
  });
});
