/**
 * The browser test: a real health server fed by a real SQLite store, retriever, deterministic embedder and
 * diagnostics collector after a small workload, driven with playwright-core in Debian's Chromium. It checks
 * rendered figures against the DTO the page received, switches language, picks an agent without samples, and
 * saves screenshots under `test-results/health-ui/` at the repository root.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHealthDto, type HealthDto } from '@engram/contracts';
import { createDiagnosticsCollector } from '@engram/diagnostics';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import { createSqliteMemoryStore, type NewMemory } from '@engram/store';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFormatter, EM_DASH } from './browser/format.js';
import { createTranslator } from './browser/i18n.js';
import { en } from './browser/messages.js';
import { zhCN } from './browser/messages-zh-cn.js';
import { type HealthServer, startHealthServer } from './server.js';

const CHROMIUM = '/usr/bin/chromium';
const RESULTS = fileURLToPath(new URL('../../../test-results/health-ui/', import.meta.url));
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

const en_ = createFormatter('en', createTranslator('en'));
const zh_ = createFormatter('zh-CN', createTranslator('zh-CN'));

let dir: string;
let browser: Browser | undefined;
let server: HealthServer;
let closeStore: () => void;
let runSearch: (agent: string, query: string) => Promise<void>;
let snapshotOf: (agent: string) => HealthDto['runtime'];

function at(dto: unknown, path: string): unknown {
  let value: unknown = dto;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || !(part in value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Loads or re-reads the page and returns the DTO it rendered (the exact response the browser got). */
async function healthResponse(page: Page, action: () => Promise<unknown>): Promise<HealthDto> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/api/health') && r.status() === 200),
    action(),
  ]);
  const dto = (await response.json()) as HealthDto;
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  return dto;
}

async function metricTexts(page: Page): Promise<{ path: string; text: string }[]> {
  return page.$$eval('[data-metric]', (nodes) =>
    nodes.map((n) => ({ path: n.getAttribute('data-metric') ?? '', text: (n.textContent ?? '').trim() })),
  );
}

/** Every `[data-metric]` element shows its DTO value formatted as a count, latency or duration, or — when missing. */
function expectMetricsMatch(dto: HealthDto, metrics: { path: string; text: string }[], fmt = en_): void {
  expect(metrics.length).toBeGreaterThan(200);
  for (const { path, text } of metrics) {
    const value = at(dto, path);
    if (value === null) {
      expect(text, path).toBe(EM_DASH);
      continue;
    }
    expect(typeof value, path).toBe('number');
    const n = value as number;
    expect([fmt.count(n), fmt.ms(n), fmt.duration(n), fmt.age(n)], path).toContain(text);
  }
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: the browser test needs Debian's chromium (apt-get install -y chromium).`,
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'engram-health-ui-'));
  const embedder = createDeterministicEmbedder();
  const collector = createDiagnosticsCollector();
  const store = createSqliteMemoryStore({
    path: join(dir, 'memory.db'),
    embedding: embedder.profile,
    observer: collector.storeObserver,
  });
  closeStore = () => store.close();
  const retriever = createRetriever({ store, embedder, observer: collector.retrievalObserver });
  runSearch = async (agent, query) => {
    await retriever.search(agent, query);
  };
  snapshotOf = (agent) => collector.snapshot(agent);

  // Workload: memories with vectors (English and Chinese) for two agents, pending rows, an idle agent.
  const vectors = await embedder.embed(CONTENT);
  const rows: NewMemory[] = CONTENT.map((content, i) => ({
    agentId: ACTIVE,
    kind: i % 3 === 0 ? 'fact' : 'semantic',
    content,
    importance: 0.4 + (i % 5) / 10,
    ...(i < 8 ? { vector: vectors[i]! } : {}),
  }));
  await store.insertMemories(rows);
  await store.insertMemories(
    CONTENT.slice(0, 4).map((content, i) => ({
      agentId: SECOND,
      kind: 'episodic',
      content,
      vector: vectors[i]!,
    })),
  );
  await store.insertMemory({ agentId: IDLE, kind: 'fact', content: 'An agent that has never searched.' });

  const queries = [
    'pnpm',
    'which port does the dev server use',
    '项目文档',
    '部署脚本',
    'sqlite-store.ts',
    'tests',
  ];
  for (let round = 0; round < 4; round++) {
    for (const q of queries) await retriever.search(ACTIVE, q);
    await retriever.recall(ACTIVE, queries[round] ?? 'pnpm');
    await retriever.injection(ACTIVE, '数据库文件');
  }
  await retriever.decision(ACTIVE, 'The user prefers pnpm');
  await retriever.search(ACTIVE, '   ');
  await retriever.search(SECOND, 'port 8080');

  // Background reports through the collector's maintenance and provider observers.
  const m = collector.maintenanceObserver;
  m.onDrainBatch?.({
    agentId: ACTIVE,
    batchSize: 2,
    durationMs: 3.5,
    transitions: { ready: 2, error: 0, ftsOnly: 0, stale: 0 },
  });
  m.onDrainBatch?.({
    agentId: ACTIVE,
    batchSize: 1,
    durationMs: 1.25,
    transitions: { ready: 0, error: 0, ftsOnly: 0, stale: 1 },
  });
  const backlog = await store.countEmbeddingBacklog();
  m.onEmbeddingBacklog?.({ total: backlog.total, activeAgents: Object.keys(backlog.byAgent).length });
  m.onExtractionQueue?.({ depth: 0, oldestAgeMs: 0 });
  m.onMaintenancePass?.({
    agentId: ACTIVE,
    durationMs: 42,
    cheap: { outcome: 'completed', repaired: 0, archived: 1, pruned: 0 },
    heavy: {
      outcome: 'completed',
      modelCalls: 8,
      inputTokens: 5120,
      denials: { challenge: 1, merge: 0, reflection: 0, persona: 1 },
      steps: { challenge: 'completed', merge: 'completed', reflection: 'skipped', persona: 'completed' },
    },
  });
  // A host reports the breaker's state after wiring (transitions report themselves).
  collector.retrievalObserver.onCircuitState?.(retriever.circuit());
  const p = collector.providerObserver;
  p.onQueue?.({ kind: 'embedding', queued: 0, active: 1 });
  p.onAdmission?.('embedding', 'admitted');
  p.onAdmission?.('embedding', 'admitted');

  const getHealth = async (agentId: string | null): Promise<HealthDto> => {
    const health = await store.health(agentId ?? undefined);
    if (!health.ok) throw new Error('store unusable');
    return createHealthDto(health.health, collector.snapshot(agentId ?? undefined));
  };
  const listAgents = async (): Promise<string[]> => [
    ...new Set([...(await store.listAgents()), ...collector.listAgents()]),
  ];
  server = await startHealthServer({ getHealth, listAgents });

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  mkdirSync(RESULTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  closeStore?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the health page in Chromium', () => {
  it('renders the figures of the snapshot, localised, and em dashes for an agent without samples', async () => {
    if (browser === undefined) throw new Error('browser did not start');
    // A fresh context per run: Playwright's launch() gives the browser its own temporary user-data dir.
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.name));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.type());
    });

    // Default language from navigator.language; "All agents" first, then the agent picker.
    await healthResponse(page, () => page.goto(server.url));
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
    const options = await page.$$eval('[data-testid=agent-select] option', (o) =>
      o.map((x) => (x as HTMLOptionElement).value),
    );
    expect(options).toEqual(['', ACTIVE, SECOND, IDLE]);

    const dto = await healthResponse(page, () => page.selectOption('[data-testid=agent-select]', ACTIVE));
    expect(dto.runtime.agentId).toBe(ACTIVE);
    const snapshot = snapshotOf(ACTIVE);
    const searchTotal = snapshot.agent.retrieval.search.latency.total;
    expect(searchTotal.p95).not.toBeNull();
    expect(dto.runtime.agent.retrieval.search.latency.total).toEqual(searchTotal);

    const p95 = page.locator('[data-metric="runtime.agent.retrieval.search.latency.total.p95"]');
    expect(await p95.textContent()).toBe(en_.ms(searchTotal.p95));
    expect(
      await page.locator('[data-metric="runtime.agent.retrieval.search.operations"]').textContent(),
    ).toBe(en_.count(snapshot.agent.retrieval.search.operations));
    expect(snapshot.agent.retrieval.search.operations).toBe(25);
    expect(await page.locator('[data-metric="store.totals.memories"]').textContent()).toBe(en_.count(10));
    expect(await page.locator('[data-metric="store.byEmbeddingState.pending"]').textContent()).toBe('2');
    expect(
      await page.locator('[data-metric="runtime.agent.maintenance.heavy.denials.challenge"]').textContent(),
    ).toBe('1');
    expect(
      await page.locator('[data-metric="runtime.agent.retrieval.search.outcomes.emptyQuery"]').textContent(),
    ).toBe('1');
    expectMetricsMatch(dto, await metricTexts(page));

    // Charts are drawn: nested p50/p95/max bars per stage for purposes with samples.
    const searchBars = page.locator('[data-purpose=search] svg.bar rect.bar-p95');
    expect(await searchBars.count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator('[data-purpose=decision] svg.bar rect.bar-p50').count()).toBeGreaterThanOrEqual(
      4,
    );

    // Process-wide gauges are labelled and apart from the cumulative counters.
    expect(await page.locator('#heading-process').textContent()).toBe(en['section.process']);
    expect(
      await page
        .locator('.card-gauges [data-metric="runtime.process.providers.embedding.active"]')
        .textContent(),
    ).toBe('1');
    expect(
      await page
        .locator('.card-counters [data-metric="runtime.process.providers.embedding.admissions.admitted"]')
        .textContent(),
    ).toBe('2');
    expect(await page.locator('.card-gauges [data-metric*=".admissions."]').count()).toBe(0);
    expect(
      await page.locator('[data-derived="runtime.process.queryEmbeddingCircuit.state"]').textContent(),
    ).toBe(en['circuit.closed']);

    // No memory content or query text anywhere on the page.
    const bodyText = await page.evaluate(() => document.body.textContent ?? '');
    for (const text of [...CONTENT.map((c) => c.slice(0, 12)), 'which port', '项目文档', '部署脚本']) {
      expect(bodyText).not.toContain(text);
    }

    // Refresh re-reads the endpoint: one more search shows up.
    await runSearch(ACTIVE, 'pnpm');
    const refreshed = await healthResponse(page, () => page.click('[data-testid=refresh]'));
    expect(refreshed.runtime.agent.retrieval.search.operations).toBe(26);
    expect(
      await page.locator('[data-metric="runtime.agent.retrieval.search.operations"]').textContent(),
    ).toBe('26');
    await page.screenshot({ path: join(RESULTS, 'health-en.png'), fullPage: true });

    // 中文: every label from the zh-CN table, no English label left.
    await page.click('[data-testid="lang-zh-CN"]');
    await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
    expect(await page.locator('#heading-process').textContent()).toBe(zhCN['section.process']);
    expect(await page.locator('[data-purpose=search] .card-title').textContent()).toBe(
      zhCN['purpose.search'],
    );
    expect(await page.locator('[data-purpose=search] tr.total th').textContent()).toBe(zhCN['stage.total']);
    expect(await page.locator('[data-testid=refresh]').textContent()).toBe(zhCN['toolbar.refresh']);
    expect(await p95.textContent()).toBe(zh_.ms(refreshed.runtime.agent.retrieval.search.latency.total.p95));
    expectMetricsMatch(refreshed, await metricTexts(page), zh_);
    const englishOnly = new Set<string>(
      Object.entries(en)
        .filter(([key, text]) => zhCN[key as keyof typeof en] !== text && !text.includes('{'))
        .map(([, text]) => text as string),
    );
    const leaves = await page.$$eval('body *', (nodes) =>
      nodes.filter((n) => n.children.length === 0).map((n) => (n.textContent ?? '').trim()),
    );
    expect(leaves.filter((text: string) => englishOnly.has(text))).toEqual([]);
    expect(await page.title()).toBe(zhCN['app.title']);
    await page.screenshot({ path: join(RESULTS, 'health-zh-CN.png'), fullPage: true });

    // An agent without runtime samples: em dashes, never 0 ms.
    const idle = await healthResponse(page, () => page.selectOption('[data-testid=agent-select]', IDLE));
    expect(idle.runtime.agent.tracked).toBe(false);
    expect(await p95.textContent()).toBe(EM_DASH);
    expect(
      await page.locator('[data-metric="runtime.agent.retrieval.search.latency.total.p50"]').textContent(),
    ).toBe(EM_DASH);
    expect(await page.locator('[data-metric="runtime.agent.embedding.duration.max"]').textContent()).toBe(
      EM_DASH,
    );
    expect(await page.locator('[data-metric="store.totals.memories"]').textContent()).toBe('1');
    expect(await page.locator('[data-testid=notice]').isVisible()).toBe(true);
    const idleTexts = await metricTexts(page);
    expect(
      idleTexts.filter(
        (m) => m.path.includes('.latency.') && m.text !== EM_DASH && !m.path.endsWith('.total'),
      ),
    ).toEqual([]);
    // The agent part has no sample at all: no "0 ms" anywhere in it (process gauges may really be 0).
    const agentTexts = idleTexts.filter((m) => m.path.startsWith('runtime.agent.'));
    expect(agentTexts.length).toBeGreaterThan(100);
    expect(agentTexts.filter((m) => /^0([.,]0+)?\s*(ms|毫秒|s|秒)$/.test(m.text))).toEqual([]);
    expectMetricsMatch(idle, idleTexts, zh_);
    await page.screenshot({ path: join(RESULTS, 'health-idle-zh-CN.png'), fullPage: true });

    // The language follows the browser by default.
    const zhContext = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1440, height: 900 } });
    const zhPage = await zhContext.newPage();
    await healthResponse(zhPage, () => zhPage.goto(`${server.url}?agent=${SECOND}`));
    expect(await zhPage.evaluate(() => document.documentElement.lang)).toBe('zh-CN');
    expect(await zhPage.locator('[data-metric="store.totals.memories"]').textContent()).toBe('4');

    expect(errors).toEqual([]);
    await zhContext.close();
    await context.close();
  });
});
