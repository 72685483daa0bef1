/**
 * The browser test: a real health server fed with health DTOs built by the contracts' own factory and
 * filled with distinct figures (every counter, gauge and percentile a different number), driven with
 * playwright-core in Debian's Chromium. It checks every rendered figure against the DTO the page received,
 * switches language, picks an agent without samples, and saves screenshots under `test-results/health-ui/`
 * at the repository root. The page fed by the real store, retriever and collector is tested where they are
 * composed (packages/cli, `health-page.native.test.ts`): health-ui depends on the contracts only.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createEmptySnapshot,
  createHealthDto,
  type DiagnosticsSnapshot,
  type HealthDto,
  type StoreHealthDto,
} from '@engram/contracts';
import { chromiumLaunchOptions } from '@engram/test-support';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFormatter, EM_DASH } from './browser/format.js';
import { createTranslator } from './browser/i18n.js';
import { en } from './browser/messages.js';
import { zhCN } from './browser/messages-zh-cn.js';
import { type HealthServer, startHealthServer } from './server.js';

const RESULTS = fileURLToPath(new URL('../../../test-results/health-ui/', import.meta.url));
const ACTIVE = 'agent-alpha';
const SECOND = 'agent-beta';
const IDLE = 'agent-idle';

/** Texts that must never appear on the page: the fixture carries none, the page must invent none. */
const CONTENT: readonly string[] = [
  'The user prefers pnpm over npm',
  '用户喜欢在周末整理项目文档',
  'which port',
  '部署脚本',
];

/** A deterministic figure per path: distinct, positive, and stable across runs. */
function figure(path: string, integer: boolean): number {
  let h = 2166136261;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 16777619) >>> 0;
  return integer ? 1 + (h % 997) : Math.round((0.5 + (h % 40000) / 100) * 100) / 100;
}

/** Fills every number of an empty snapshot part with a distinct figure; distributions stay ordered. */
function fill(value: unknown, path: string): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value !== 'number') return value;
    // Timestamps are recent epoch milliseconds; everything else a small distinct count.
    return path.endsWith('At') ? Date.now() - figure(path, true) * 1000 : figure(path, true);
  }
  const record = value as Record<string, unknown>;
  if ('p50' in record && 'p95' in record && 'max' in record) {
    const p50 = figure(path, false);
    const total = figure(`${path}.total`, true);
    return { count: Math.min(total, 256), total, p50, p95: p50 * 2, max: p50 * 3 };
  }
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fill(v, `${path}.${k}`)]));
}

const state = { searches: 25 };

/** A failed integrity check, as a store that found its file damaged reports it. */
const FAILED_CHECK = { state: 'failed', checkedAt: 1_700_000_000_000 } as const;
/** A check that failed on rows no reader can use and damaged vector chunks only: writes stay allowed. */
const DAMAGED_CHECK = { ...FAILED_CHECK, badRows: 2, damagedVectorChunks: 1 } as const;

function storeHealth(
  memories: number,
  pending: number,
  integrity?: StoreHealthDto['integrity'],
): StoreHealthDto {
  const empty = createHealthDto(
    {
      totals: { memories, events: 0, facts: 0, skills: 0 },
      byKind: {},
      byLifecycle: {},
      byEmbeddingState: { pending, ready: memories - pending },
      ...(integrity === undefined ? {} : { integrity }),
    } as unknown as StoreHealthDto,
    createEmptySnapshot(),
  );
  return empty.store;
}

/** The DTO of an agent: filled for the two active agents, empty (never sampled) for the idle one. */
function dtoFor(agentId: string | null): HealthDto {
  const now = Date.now();
  const base = createEmptySnapshot(agentId ?? undefined, { generatedAt: now });
  const process = fill(base.process, 'process') as DiagnosticsSnapshot['process'];
  const circuit = {
    ...process.queryEmbeddingCircuit,
    state: { closed: true, open: false, halfOpen: false },
  };
  if (agentId === IDLE) {
    return createHealthDto(storeHealth(1, 0, DAMAGED_CHECK), {
      ...base,
      process: { ...process, queryEmbeddingCircuit: circuit },
    });
  }
  const agent = fill(base.agent, 'agent') as DiagnosticsSnapshot['agent'];
  const search = agent.retrieval.search;
  const filled: DiagnosticsSnapshot = {
    ...base,
    agent: {
      ...agent,
      tracked: true,
      firstSeenAt: now - 3_600_000,
      lastSeenAt: now - 5_000,
      retrieval: {
        ...agent.retrieval,
        search: {
          ...search,
          operations: state.searches,
          outcomes: { ...search.outcomes, emptyQuery: 1 },
        },
      },
      maintenance: {
        ...agent.maintenance,
        heavy: { ...agent.maintenance.heavy, denials: { ...agent.maintenance.heavy.denials, challenge: 1 } },
      },
    },
    process: {
      ...process,
      queryEmbeddingCircuit: circuit,
      providers: {
        ...process.providers,
        embedding: {
          ...process.providers.embedding,
          active: 1,
          admissions: { ...process.providers.embedding.admissions, admitted: 2 },
        },
      },
    },
  };
  const store = agentId === SECOND ? storeHealth(4, 0) : storeHealth(10, 2, FAILED_CHECK);
  if (agentId !== null) return createHealthDto(store, filled);
  // All agents: the processes using the store, this one and another, and one row that could not be read.
  const empty = createEmptySnapshot(undefined, { generatedAt: now });
  const other: DiagnosticsSnapshot = {
    ...empty,
    agent: { ...(fill(empty.agent, 'other.agent') as DiagnosticsSnapshot['agent']), tracked: true },
    process: fill(empty.process, 'other.process') as DiagnosticsSnapshot['process'],
  };
  return createHealthDto(store, filled, {
    list: [
      { id: 'a'.repeat(32), self: true, startedAt: now - 60_000, beatAt: now, runtime: filled },
      { id: 'b'.repeat(32), self: false, startedAt: now - 30_000, beatAt: now - 1_000, runtime: other },
    ],
    skipped: 1,
  });
}

const en_ = createFormatter('en', createTranslator('en'));
const zh_ = createFormatter('zh-CN', createTranslator('zh-CN'));

let browser: Browser | undefined;
let server: HealthServer;
let runSearch: () => void;
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
  runSearch = () => {
    state.searches += 1;
  };
  snapshotOf = (agent) => dtoFor(agent).runtime;
  server = await startHealthServer({ getHealth: dtoFor, listAgents: () => [ACTIVE, SECOND, IDLE] });

  browser = await chromium.launch(chromiumLaunchOptions());
  mkdirSync(RESULTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
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
    const all = await healthResponse(page, () => page.goto(server.url));
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
    // Every process using the store, one row each, this page's tagged; its figures are the DTO's.
    const rows = page.locator('#section-processes tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).locator('code').textContent()).toBe('aaaaaaaa');
    expect(await rows.nth(0).locator('.tag').textContent()).toBe(` ${en['processes.self']}`);
    expect(
      await page
        .locator('[data-metric="processes.list.1.runtime.agent.retrieval.search.latency.total.p95"]')
        .textContent(),
    ).toBe(en_.ms(all.processes?.list[1]?.runtime.agent.retrieval.search.latency.total.p95));
    expect(await page.locator('[data-derived="processes.skipped"]').textContent()).toBe(
      en['processes.skipped'].replace('{count}', '1'),
    );
    expectMetricsMatch(all, await metricTexts(page));
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
    // The file's integrity check: its outcome and when it ran; a store that reports none shows "not checked".
    expect(await page.locator('[data-integrity]').getAttribute('data-integrity')).toBe('failed');
    expect(await page.locator('[data-integrity]').textContent()).toBe(en['integrity.failed']);
    expect(await page.locator('[data-integrity-checked-at]').textContent()).toBe(
      en_.dateTime(FAILED_CHECK.checkedAt),
    );
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
    for (const text of CONTENT) {
      expect(bodyText).not.toContain(text);
    }

    // Refresh re-reads the endpoint: one more search shows up.
    runSearch();
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
    // A check that failed on damaged rows and vector chunks only says so, and that writes stay allowed.
    expect(await page.locator('[data-integrity]').getAttribute('data-integrity')).toBe('failed');
    expect(await page.locator('[data-integrity]').textContent()).toBe(
      zhCN['store.integrity.damaged'].replace('{rows}', '2').replace('{chunks}', '1'),
    );
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
    expect(await zhPage.locator('[data-integrity]').getAttribute('data-integrity')).toBe('notChecked');
    expect(await zhPage.locator('[data-integrity]').textContent()).toBe(zhCN['integrity.notChecked']);

    expect(errors).toEqual([]);
    await zhContext.close();
    await context.close();
  });
});
