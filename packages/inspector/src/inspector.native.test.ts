/**
 * The browser test: `openInspectorSource` over a real SQLite file (deterministic embedder) written through the
 * facade, served by `startInspector`, driven with playwright-core in Debian's Chromium. It opens the printed
 * link, finds a memory by search and reads its explanation, resolves an open conflict (confirmed, recorded as
 * the inspector with a reason) and sees the history change, reads a session with its tool calls and the recall
 * of one message (opened from the session list), sees a failed embedding with its provider's error code on the
 * backlog page, checks that a stored `<script>` and U+202E are shown as text, switches to Chinese, and
 * attaches screenshots in both languages to the test output (also saved under `test-results/inspector/`; the
 * English search page at 1200 px is the picture in the CLI's README).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory } from '@engram/memory';
import { openEngine } from '@engram/memory/compose';
import { chromiumLaunchOptions } from '@engram/test-support';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { en } from './messages.js';
import { zhCN } from './messages-zh-cn.js';
import { type OpenedInspectorSource, openInspectorSource } from './open.js';
import { type InspectorServer, startInspector } from './server.js';

const RESULTS = fileURLToPath(new URL('../../../test-results/inspector/', import.meta.url));
/** The memory whose embedding fails in the sample file, and the provider's code it keeps. */
const UNEMBEDDED = 'The nightly backup runs at 02:00 UTC';
const FAILURE_CODE = 'ENGRAM_PROVIDER_TIMEOUT';
const HOSTILE = '<script>window.__pwned = 1</script> invoice \u202Efdp.exe';

let dir: string;
let opened: OpenedInspectorSource;
let server: InspectorServer;
let browser: Browser | undefined;
let olderPort: string;
let newerPort: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-inspector-'));
  const db = join(dir, 'memory.db');
  const memory = await createMemory({ path: db, embedder: 'deterministic', agentId: 'coder' });
  await memory.add('The user prefers pnpm over npm for every project', { tags: ['topic:tooling'] });
  olderPort = (await memory.add('The staging API port is 8080')).added[0]?.id ?? '';
  const newer = await memory.add('The staging API port is 9090');
  newerPort = newer.added[0]?.id ?? '';
  expect(newer.conflicts?.map((c) => c.id)).toEqual([olderPort]);
  await memory.add(HOSTILE);
  await memory.add(
    [
      { role: 'user', content: 'Which port does staging use?' },
      {
        role: 'assistant',
        type: 'tool_call',
        toolName: 'memory_search',
        id: 'call-1',
        content: '{"query":"staging port"}',
      },
      {
        role: 'tool',
        type: 'tool_result',
        toolName: 'memory_search',
        id: 'call-1',
        content: 'The staging API port is 9090',
      },
      { role: 'assistant', content: 'Staging listens on 9090.' },
    ],
    { sessionId: 'chat-1' },
  );
  await memory.flush();
  await memory.close();
  // One memory whose embedding fails: the provider times out (its message is never kept, its code is).
  const engine = await openEngine({ path: db, embedder: 'deterministic' });
  const profile = engine.embedder.profile;
  await engine.close();
  const failing = await createMemory({
    path: db,
    agentId: 'coder',
    embedder: {
      profile,
      embed: async () => {
        throw Object.assign(new Error('upstream timed out after 30 s'), { code: FAILURE_CODE });
      },
    },
  });
  await failing.add(UNEMBEDDED);
  await failing.flush();
  await failing.close();
  opened = await openInspectorSource({ db });
  server = await startInspector({ source: opened.source, agentId: 'coder' });
  browser = await chromium.launch(chromiumLaunchOptions());
  mkdirSync(RESULTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await opened?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the inspector in Chromium', () => {
  it('finds, explains, resolves a conflict and shows the history, in English and Chinese', async ({
    annotate,
  }) => {
    if (browser === undefined) throw new Error('browser did not start');
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.name));
    const base = `http://127.0.0.1:${server.port}/`;

    // Without the token: nothing.
    const refused = await page.goto(base);
    expect(refused?.status()).toBe(401);
    expect(await page.content()).not.toContain('pnpm');

    // The printed link: the cookie is set and the token leaves the address bar.
    await page.goto(server.url);
    expect(page.url()).toBe(base);
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]?.httpOnly).toBe(true);
    expect(cookies[0]?.sameSite).toBe('Strict');
    // Five facts and the session's four messages (logged as events without a model).
    expect(await page.locator('[data-testid=memories] tbody tr').count()).toBe(9);
    await page.selectOption('[data-testid=filter-kind]', 'fact');
    await page.click('form.filters button');
    expect(await page.locator('[data-testid=memories] tbody tr').count()).toBe(5);

    // Hostile stored text is text: no script ran, the override is a visible marker.
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    const hostileRow = page.locator('tr', { hasText: 'invoice' });
    expect(await hostileRow.locator('.memory-link').textContent()).toContain(
      '<script>window.__pwned = 1</script>',
    );
    expect(await hostileRow.locator('.ctl').textContent()).toBe('U+202E');

    // Search runs the real retrieval and draws the explanation.
    await page.click('[data-testid=nav-search]');
    await page.fill('[data-testid=search-input]', 'pnpm');
    await page.click('[data-testid=search-submit]');
    const first = page.locator('[data-hit="1"]');
    expect(await first.locator('.memory-link').textContent()).toBe(
      'The user prefers pnpm over npm for every project',
    );
    expect(await first.locator('[data-explain=arms]').textContent()).toContain(en['arm.lexical']);
    expect(await first.locator('[data-explain=lexicalRank] td').textContent()).toBe('1');
    expect(Number(await first.locator('[data-explain=final] td').textContent())).toBeGreaterThan(0);
    await page.fill('[data-testid=search-input]', 'staging API port');
    await page.click('[data-testid=search-submit]');
    expect(await page.locator('[data-explain=conflict]').count()).toBeGreaterThan(0);
    // The picture in the CLI's README: this page, sample data only, 1200 px wide.
    await page.setViewportSize({ width: 1200, height: 760 });
    await page.screenshot({ path: join(RESULTS, 'inspector-readme-en.png') });
    await page.setViewportSize({ width: 1360, height: 900 });
    await page.screenshot({ path: join(RESULTS, 'inspector-search-en.png'), fullPage: true });
    await annotate('search with explanations (en)', 'screenshot', {
      path: join(RESULTS, 'inspector-search-en.png'),
      contentType: 'image/png',
    });

    // The conflict, side by side: keep the newer port, confirmed, with a reason.
    await page.click('[data-testid=nav-conflicts]');
    const conflict = page.locator('[data-testid=conflict]');
    expect(await conflict.count()).toBe(1);
    const newerSide = conflict.locator(`.side[data-memory="${newerPort}"]`);
    await newerSide.locator('[data-testid=keep-form] input[name=reason]').fill('staging moved to 9090');
    await newerSide.locator('[data-testid=keep]').click();
    expect(await page.locator('[data-testid=confirm-question]').textContent()).toBe(en['action.confirmKeep']);
    await page.click('[data-testid=confirm]');
    // The forgotten side's history: its tombstone, by the inspector, with the reason.
    expect(page.url()).toContain(`id=${olderPort}`);
    const tombstone = page.locator('[data-testid=history] .forgotten');
    expect(await tombstone.textContent()).toContain('inspector');
    expect(await tombstone.textContent()).toContain('staging moved to 9090');
    await page.click('[data-testid=nav-conflicts]');
    expect(await page.locator('[data-testid=conflicts-empty]').count()).toBe(1);

    // An update from the memory page: the old version stays, with who changed it and why.
    await page.goto(`${base}memory?agent=coder&id=${newerPort}`);
    await page.fill('[data-testid=update-form] textarea', 'The staging API port is 9091');
    await page.fill('[data-testid=update-form] input[name=reason]', 'port bumped');
    await page.click('[data-testid=update-form] button');
    await page.click('[data-testid=confirm]');
    const versions = page.locator('[data-testid=history] .version');
    expect(await versions.count()).toBe(2);
    expect(await versions.nth(0).textContent()).toContain('The staging API port is 9090');
    expect(await versions.nth(0).locator('.change').textContent()).toContain('inspector');
    expect(await versions.nth(0).locator('.change').textContent()).toContain('port bumped');
    expect(await versions.nth(1).textContent()).toContain('The staging API port is 9091');

    // The session list, read without typing an id: the conversation with its entry count, opened by its link.
    await page.click('[data-testid=nav-session]');
    const listed = page.locator('[data-testid=sessions] tr[data-session-row]');
    expect(await listed.count()).toBe(1);
    expect(await listed.locator('td').nth(1).textContent()).toBe('4');
    await listed.locator('[data-testid=session-link]').click();
    expect(page.url()).toContain('session=chat-1');
    // The session as logged, its tool call and result, and what recall puts before the model.
    expect(await page.locator('[data-testid=session-log] .entry').count()).toBe(4);
    expect(await page.locator('.entry-tool_call .who').textContent()).toBe('tool call memory_search');
    expect(await page.locator('.entry-tool_result pre').textContent()).toBe('The staging API port is 9090');
    await page.click('[data-testid=recall-1]');
    expect(await page.locator('[data-testid=recall]').count()).toBe(1);
    expect(await page.locator('[data-testid=tokens-total]').textContent()).toMatch(/^Total: \d+ tokens$/);
    expect(await page.locator('[data-block=core] pre').textContent()).toContain('pnpm');

    // The backlog and the store.
    await page.click('[data-testid=nav-backlog]');
    expect(await page.locator('[data-stat=pending] .stat-value').textContent()).toBe('0');
    expect(await page.locator('[data-stat=error] .stat-value').textContent()).toBe('1');
    // The failed row with the provider's code (never its message), linked to the memory.
    const failure = page.locator('[data-testid=failures] tbody tr');
    expect(await failure.count()).toBe(1);
    expect(await failure.locator('[data-testid=failure-code]').textContent()).toBe(FAILURE_CODE);
    expect(await page.content()).not.toContain('timed out after');
    await failure.locator('.memory-link').click();
    expect(await page.locator('[data-testid=memory-content]').textContent()).toBe(UNEMBEDDED);
    await page.goBack();
    expect(await page.locator('[data-testid=embedder]').textContent()).toContain('deterministic');
    expect(await page.locator('[data-testid=size]').textContent()).toMatch(/B$/);

    // 中文: the language link switches and is remembered.
    await page.click('[data-testid=nav-memories]');
    await page.screenshot({ path: join(RESULTS, 'inspector-memories-en.png'), fullPage: true });
    await annotate('memories (en)', 'screenshot', {
      path: join(RESULTS, 'inspector-memories-en.png'),
      contentType: 'image/png',
    });
    await page.click('[data-testid=lang-zh-CN]');
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('zh-CN');
    expect(await page.locator('[data-testid=page-title]').textContent()).toBe(zhCN['nav.memories']);
    await page.goto(`${base}search?agent=coder&q=staging`);
    expect(await page.locator('[data-testid=search-submit]').textContent()).toBe(zhCN['search.submit']);
    expect(await page.locator('[data-hit="1"] [data-explain=arms] th').textContent()).toBe(
      zhCN['explain.arms'],
    );
    await page.screenshot({ path: join(RESULTS, 'inspector-search-zh-CN.png'), fullPage: true });
    await annotate('search with explanations (zh-CN)', 'screenshot', {
      path: join(RESULTS, 'inspector-search-zh-CN.png'),
      contentType: 'image/png',
    });
    await page.goto(`${base}memory?agent=coder&id=${olderPort}`);
    await page.screenshot({ path: join(RESULTS, 'inspector-history-zh-CN.png'), fullPage: true });
    await annotate('history with a tombstone (zh-CN)', 'screenshot', {
      path: join(RESULTS, 'inspector-history-zh-CN.png'),
      contentType: 'image/png',
    });

    expect(errors).toEqual([]);
    await context.close();
  });
});
