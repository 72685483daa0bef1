#!/usr/bin/env node
// The consumer test: proves the published packages work as a user installs them from a registry.
//
//   1. packs every published library package (`pnpm pack`, which rewrites `workspace:^` to real versions);
//   2. health phase: a fresh project gets ONLY the contracts, diagnostics and health-ui tarballs (plus their
//      npm dependencies) with install scripts enabled; it asserts that nothing native was installed or
//      compiled (no better-sqlite3, no sqlite-vec, no `.node` binary, no binding.gyp, no producer package)
//      and runs a tiny script: a collector records one retrieval, the health DTO is built and validated,
//      and the health-ui handler answers `/api/health`, the page and its assets;
//   3. full phase: a fresh project in the OS temp directory, outside the workspace, `npm install`s all the
//      tarballs at once with --engine-strict (so @engram/* dependencies resolve to the local tarballs, every
//      `engines` range admits this Node, and better-sqlite3 installs or compiles as it would for a user);
//      then runs a small ESM script in that project that opens a store, remembers, drains, searches, snapshots
//      diagnostics and serves the health endpoint, the page and every one of its shipped assets — asserting
//      each step; then runs the `@engram/memory` README's five-line example as the README shows it, and the
//      examples/ai-sdk-chat and examples/langchain-rag scripts with what their package.json files declare from
//      npm (`ai`, `@langchain/core` and the endpoint packages, which must import);
//   4. CLI phase, in the same project: `npx @engram/cli mcp` (the bin of the installed @engram/cli tarball) is
//      driven over stdio by the official MCP SDK client (`@modelcontextprotocol/sdk` 1.x from npm): it lists the
//      tools with their titles and hints, remembers a fact, finds it by `memory_search` with structured
//      content, and reads the core memory resource; `npx engram remember|search --json` answer parseably;
//      `npx engram export | npx engram import` copies the file into a fresh one with identical rows;
//   5. removes the temporary directory (keep it with ENGRAM_KEEP_CONSUMER=1).
//
// ENGRAM_CONSUMER_PHASE=health runs the health phase only (no better-sqlite3 install: seconds, not minutes).
//
// It builds nothing: run it after `pnpm build` (the test ladder has built). Node's standard library only.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();

function log(message) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[consumer ${seconds}s] ${message}\n`);
}

function fail(message) {
  log(`FAILED: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}

/** The pnpm to run: pnpm on PATH, else the copy `scripts/run.mjs` installs into .tools/. */
function pnpmCommand() {
  if (spawnSync('pnpm', ['--version'], { stdio: 'ignore' }).status === 0) return ['pnpm', []];
  const local = join(root, '.tools', 'node_modules', '.bin', 'pnpm');
  if (existsSync(local)) return [local, []];
  fail('pnpm is not installed: run `npm run setup` (or install pnpm) first');
}

/** Runs a command to completion; a heartbeat line every 20 s says it is still going. */
function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (options.echo === true) process.stderr.write(chunk);
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
      if (options.echo === true) process.stderr.write(chunk);
    });
    const heartbeat =
      options.heartbeat === undefined
        ? null
        : setInterval(() => log(`${options.heartbeat} (still running)`), 20_000);
    child.once('error', (error) => {
      if (heartbeat !== null) clearInterval(heartbeat);
      reject(error);
    });
    child.once('close', (code) => {
      if (heartbeat !== null) clearInterval(heartbeat);
      resolve({ code, output });
    });
  });
}

/** The published library packages: every non-private package under packages/. */
function publishedPackages() {
  const dir = join(root, 'packages');
  const found = [];
  for (const name of readdirSync(dir).sort()) {
    const manifestPath = join(dir, name, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (manifest.private === true) continue;
    found.push({ dir: join(dir, name), name: manifest.name, version: manifest.version });
  }
  return found;
}

// The packages the health phase installs alone: nothing of them may pull in a producer or native code.
const HEALTH_PACKAGES = ['@engram/contracts', '@engram/diagnostics', '@engram/health-ui'];

// What must not appear anywhere in the health project's node_modules (names of directories and files).
const NATIVE_MARKERS = [
  { what: 'better-sqlite3', test: (name) => name.startsWith('better-sqlite3') },
  { what: 'sqlite-vec', test: (name) => name.startsWith('sqlite-vec') },
  { what: 'a compiled .node binary', test: (name) => name.endsWith('.node') },
  { what: 'a binding.gyp (node-gyp build)', test: (name) => name === 'binding.gyp' },
  {
    what: 'a producer package',
    test: (name, parent) => parent.endsWith('@engram') && !HEALTH_PACKAGES.includes(`@engram/${name}`),
  },
];

/** Every path under `dir` (recursively, symlinks not followed) that matches a native marker. */
function nativeFindings(dir) {
  const found = [];
  const walk = (current) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      for (const marker of NATIVE_MARKERS) {
        if (marker.test(entry.name, current)) found.push(`${marker.what}: ${full}`);
      }
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return found;
}

// The script the health project runs: diagnostics and the health page without any producer installed.
const HEALTH_SCRIPT = String.raw`
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import * as contracts from '@engram/contracts';
import * as enums from '@engram/contracts/enums';
import * as healthEntry from '@engram/contracts/health';
import * as errorsEntry from '@engram/contracts/errors';
import * as observers from '@engram/contracts/observers';
import * as rules from '@engram/contracts/rules';
import { createDiagnosticsCollector, createHealthDto, healthDtoSchema } from '@engram/diagnostics';
import { createHealthHandler, healthUiAssets } from '@engram/health-ui';

const step = (message) => console.log('  ✓ ' + message);
for (const name of ['@engram/store', '@engram/store-sqlite', '@engram/retrieval', '@engram/tools', '@engram/maintenance', 'better-sqlite3', 'sqlite-vec']) {
  await assert.rejects(import(name), { code: 'ERR_MODULE_NOT_FOUND' }, name + ' must not be installed');
}
step('no producer and no native package is importable');

assert.deepEqual(enums.RETRIEVAL_PURPOSES, contracts.RETRIEVAL_PURPOSES);
const fromEntries = [enums, rules, observers, healthEntry, errorsEntry].flatMap((entry) => Object.keys(entry)).sort();
assert.deepEqual(Object.keys(contracts).sort(), fromEntries);
step('the contracts entries /enums, /rules, /observers, /health and /errors make up its root');
const agentId = 'consumer';
const collector = createDiagnosticsCollector();
collector.retrievalObserver.onRetrieval({
  purpose: 'search',
  agentId,
  startedAt: Date.now(),
  latencies: { keyword: 1, total: 3 },
  candidates: { fts: 2, vector: 0, selected: 1 },
  outcome: 'completed',
  degradations: ['vectorCold'],
  arms: ['lexical'],
});
const snapshot = collector.snapshot(agentId);
assert.equal(snapshot.agent.retrieval.search.operations, 1);
assert.equal(snapshot.agent.retrieval.search.degradations.vectorCold, 1);
assert.equal(snapshot.agent.retrieval.search.latency.total.p50, 3);
step('a diagnostics collector recorded one retrieval through its observer');

const zeros = (keys) => Object.fromEntries(keys.map((key) => [key, 0]));
const store = {
  totals: { memories: 1, events: 0, facts: 1, skills: 0 },
  byKind: { ...zeros(contracts.MEMORY_KINDS), fact: 1 },
  byLifecycle: { ...zeros(contracts.LIFECYCLES), active: 1 },
  byEmbeddingState: { ...zeros(contracts.EMBEDDING_STATES), ftsOnly: 1 },
};
const dto = createHealthDto(store, snapshot);
contracts.healthDtoSchema.parse(dto);
assert.equal(healthDtoSchema.parse(JSON.parse(JSON.stringify(dto))).runtime.agentId, agentId);
step('built the health DTO and validated it with the contracts schema');

const handler = createHealthHandler({ getHealth: () => dto, listAgents: () => collector.listAgents() });
const server = createServer(handler);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = 'http://127.0.0.1:' + server.address().port + '/';
try {
  const api = await fetch(base + 'api/health');
  assert.equal(api.status, 200);
  const served = contracts.healthDtoSchema.parse(await api.json());
  assert.equal(served.runtime.agent.retrieval.search.operations, 1);
  const page = await fetch(base);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  for (const asset of healthUiAssets.files) {
    const response = await fetch(base + asset.urlPath.slice(1));
    assert.equal(response.status, 200, asset.urlPath);
    assert.ok((await response.arrayBuffer()).byteLength > 0, asset.urlPath + ' is empty');
  }
  // The page's enum tuples are the contracts build itself, served unchanged (not a copy).
  const enumsAsset = healthUiAssets.files.find((asset) => asset.urlPath.endsWith('/contracts/enums.js'));
  assert.ok(enumsAsset, 'the page loads the contracts enums module');
  const enumsFile = createRequire(import.meta.url).resolve('@engram/contracts/enums');
  const servedEnums = await (await fetch(base + enumsAsset.urlPath.slice(1))).text();
  assert.equal(servedEnums, readFileSync(enumsFile, 'utf8'));
} finally {
  await new Promise((resolve) => server.close(resolve));
}
step('health-ui answered /api/health, the page and its ' + healthUiAssets.files.length + ' assets (the enums module from contracts)');
`;

/** The health phase: contracts + diagnostics + health-ui alone, installed with scripts enabled. */
async function healthPhase(work, tarballOf) {
  const project = join(work, 'health-project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'engram-health-consumer', version: '0.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  const tarballs = HEALTH_PACKAGES.map(tarballOf);
  log(`health phase: npm install of ${HEALTH_PACKAGES.join(', ')} alone (install scripts enabled) …`);
  const install = await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      '--ignore-scripts=false',
      '--foreground-scripts',
      '--engine-strict',
      ...tarballs,
    ],
    { cwd: project, heartbeat: 'npm install (health phase)' },
  );
  if (install.code !== 0)
    fail(`health phase: npm install exited ${install.code}:\n${install.output.slice(-4000)}`);
  if (/node-gyp|prebuild-install|gyp info/i.test(install.output)) {
    fail(`health phase: the install ran a native build:\n${install.output.slice(-2000)}`);
  }
  const findings = nativeFindings(join(project, 'node_modules'));
  if (findings.length > 0)
    fail(`health phase: native or producer code was installed:\n${findings.join('\n')}`);
  log('health phase: installed; no native module, no compiler run, no producer package');
  writeFileSync(join(project, 'health.mjs'), HEALTH_SCRIPT);
  const result = await run(process.execPath, ['health.mjs'], { cwd: project, echo: true });
  if (result.code !== 0) fail(`health phase: health.mjs exited ${result.code}`);
  log('health phase PASSED: diagnostics and the health page work with no producer and nothing compiled');
}

// The script the consumer project runs: plain ESM against the installed packages, asserting every step.
const CONSUMER_SCRIPT = String.raw`
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import { createToolHandler } from '@engram/tools';
import { createEmbeddingDrain, createEventIngestor } from '@engram/maintenance';
import { createDiagnosticsCollector, createHealthDto, healthDtoSchema } from '@engram/diagnostics';
import { createHealthHandler, healthUiAssets } from '@engram/health-ui';

const step = (message) => console.log('  ✓ ' + message);
const packages = JSON.parse(process.argv[2]);
assert.ok(Number(process.versions.node.split('.')[0]) >= 20, 'Node 20 or later');
step('Node ' + process.version + ' (ESM, ' + process.platform + '-' + process.arch + ')');

for (const name of packages) {
  const module = await import(name);
  assert.ok(Object.keys(module).length > 0, name + ' exports nothing');
}
step('imported ' + packages.length + ' packages by name: ' + packages.join(', '));

const agentId = 'consumer';
const collector = createDiagnosticsCollector();
const embedder = createDeterministicEmbedder();
const path = join(mkdtempSync(join(process.cwd(), 'db-')), 'memory.db');
const store = createSqliteMemoryStore({ path, embedding: embedder.profile, observer: collector.storeObserver });
step('opened a SQLite store (FTS5 + sqlite-vec) at ' + path);

const retriever = createRetriever({ store, embedder, observer: collector.retrievalObserver });
const tools = createToolHandler({ store, retriever, embedder });
const remembered = await tools.execute('memory_remember', { content: 'The deploy pipeline runs pnpm build, then turbo test.' }, { agentId });
assert.equal(remembered.ok, true, remembered.text);
const again = await tools.execute('memory_remember', { content: 'The deploy pipeline runs pnpm build, then turbo test.' }, { agentId });
assert.match(again.text, /Already remembered/);
const ingestor = createEventIngestor({ store });
const session = [
  { seq: 1, type: 'message', role: 'user', content: 'Checkout was unavailable for 12 minutes during the payment outage.' },
  { seq: 2, type: 'message', role: 'assistant', content: '结账服务中断了十二分钟，原因是重试没有退避。' },
];
const ingested = await ingestor.appendAndIngest(agentId, 'session-1', session);
assert.equal(ingested.ingest.memories, 2);
const reingested = await ingestor.appendAndIngest(agentId, 'session-1', session);
assert.equal(reingested.appended, 0);
assert.equal(reingested.ingest.memories, 0);
step('remembered a fact through memory_remember (a duplicate was refused); ingested a session of two events (twice: idempotent)');

const drain = createEmbeddingDrain({ store, embedder, observer: collector.maintenanceObserver });
const drained = await drain.run({ agentId });
assert.equal(drained.outcome, 'completed');
assert.equal(drained.transitions.ready, 2);
assert.equal(drained.backlog, 0);
step('drained ' + drained.rows + ' pending rows to ready (backlog ' + drained.backlog + ')');

const synonym = await retriever.search(agentId, 'downtime', { limit: 3 });
assert.equal(synonym.execution.outcome, 'completed');
assert.deepEqual(synonym.execution.arms, ['lexical', 'vector']);
assert.match(synonym.results[0]?.record.content ?? '', /outage/);
assert.ok(synonym.results[0].explanation.arms.includes('vector'));
const exact = await retriever.search(agentId, 'turbo', { limit: 3 });
assert.match(exact.results[0]?.record.content ?? '', /turbo test/);
const cjk = await retriever.search(agentId, '中断', { limit: 3 });
assert.match(cjk.results[0]?.record.content ?? '', /中断/);
const tool = await tools.execute('memory_search', { query: 'pnpm build' }, { agentId });
assert.equal(tool.ok, true);
assert.match(tool.text, /deploy pipeline/);
step('searched: "downtime" found the outage by vector, "turbo" and "中断" by keyword, memory_search answered');

const snapshot = collector.snapshot(agentId);
assert.equal(snapshot.agent.retrieval.search.operations, 4);
assert.equal(snapshot.agent.retrieval.search.outcomes.completed, 4);
assert.equal(snapshot.agent.embedding.rows, 2);
assert.ok(snapshot.agent.retrieval.search.latency.total.p50 !== null);
const health = await store.health(agentId);
assert.equal(health.ok, true);
const dto = healthDtoSchema.parse(createHealthDto(health.health, snapshot));
assert.deepEqual(dto.store.totals, { memories: 3, events: 2, facts: 1, skills: 0 });
step('diagnostics snapshot: 4 searches, 2 rows drained; health DTO valid (3 memories)');

const handler = createHealthHandler({ getHealth: () => dto, listAgents: () => [agentId] });
const server = createServer(handler);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = 'http://127.0.0.1:' + server.address().port + '/';
const api = await fetch(base + 'api/health');
assert.equal(api.status, 200);
assert.equal(healthDtoSchema.parse(await api.json()).store.totals.memories, 3);
const page = await fetch(base);
assert.equal(page.status, 200);
assert.match(page.headers.get('content-type') ?? '', /text\/html/);
// Every file the page loads ships in the tarball and is served: the shell, its stylesheet, its modules.
assert.ok(healthUiAssets.files.some((a) => a.urlPath === '/app/main.js'));
for (const asset of healthUiAssets.files) {
  const response = await fetch(base + asset.urlPath.slice(1));
  assert.equal(response.status, 200, asset.urlPath);
  assert.equal(response.headers.get('content-type'), asset.contentType, asset.urlPath);
  assert.ok((await response.arrayBuffer()).byteLength > 0, asset.urlPath + ' is empty');
}
await new Promise((resolve) => server.close(resolve));
step('served the health page, its ' + healthUiAssets.files.length + ' assets and /api/health from @engram/health-ui');

await store.close();
step('closed the store');
`;

// The examples run from the installed packages, and a line each must print; `endpoint` is the package each
// imports when an OpenAI-compatible endpoint is configured.
const EXAMPLES = [
  {
    dir: 'ai-sdk-chat',
    file: 'chat.mjs',
    expect: "From memory: The user's favourite editor is Helix.",
    endpoint: '@ai-sdk/openai-compatible',
  },
  {
    dir: 'langchain-rag',
    file: 'rag.mjs',
    expect: 'According to the runbook: To roll back a deploy',
    endpoint: '@langchain/openai',
  },
];
// What the examples' package.json files declare from npm (the `workspace:` ones are the packed tarballs): the
// frameworks within the adapters' peer ranges (`ai` 7, also admitted, needs Node 22: the ai-sdk package
// type-checks it with `check:ai7`) and the endpoint packages, installed beside the packed adapters.
const FRAMEWORKS = [
  ...new Set(
    EXAMPLES.flatMap((example) => {
      const manifest = JSON.parse(readFileSync(join(root, 'examples', example.dir, 'package.json'), 'utf8'));
      return Object.entries(manifest.dependencies ?? {})
        .filter(([, range]) => !String(range).startsWith('workspace:'))
        .map(([name, range]) => `${name}@${range}`);
    }),
  ),
];

// The script the CLI phase runs: the installed `engram` bin, through npx, as an MCP server for the SDK client.
const MCP_SCRIPT = `
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const step = (message) => console.log('  ✓ ' + message);
const db = join(mkdtempSync(join(process.cwd(), 'mcp-')), 'memory.db');
const env = { ...process.env, ENGRAM_EMBEDDER: 'deterministic' };
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const transport = new StdioClientTransport({
  command: npx,
  // As a user's MCP client configuration runs it: npx @engram/cli mcp --db F (--no: never download).
  args: ['--no', '@engram/cli', 'mcp', '--db', db, '--agent', 'consumer'],
  env,
  stderr: 'inherit',
});
const client = new Client({ name: 'engram-consumer', version: '0.0.0' });
await client.connect(transport);
try {
  assert.equal(client.getServerVersion()?.name, 'engram');
  assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: false });
  const { tools } = await client.listTools();
  const search = tools.find((tool) => tool.name === 'memory_search');
  assert.equal(search?.title, 'Search memory');
  assert.equal(search?.annotations?.readOnlyHint, true);
  assert.ok(tools.some((tool) => tool.name === 'memory_remember'));
  step('npx @engram/cli mcp answered the MCP SDK client: ' + tools.length + ' tools with titles and hints');

  const remembered = await client.callTool({
    name: 'memory_remember',
    arguments: { content: 'The billing service retries webhooks three times.' },
  });
  assert.equal(remembered.isError, false);
  assert.equal(remembered.structuredContent.action, 'remembered');
  const found = await client.callTool({ name: 'memory_search', arguments: { query: 'billing webhooks' } });
  assert.equal(found.isError, false);
  assert.equal(found.structuredContent.results[0]?.id, remembered.structuredContent.id);
  assert.match(found.content[0].text, /billing service retries webhooks/);
  const core = await client.readResource({ uri: 'engram://core' });
  assert.match(core.contents[0].text, /billing service retries webhooks/);
  step('memory_remember, then memory_search found it (structuredContent), and engram://core lists it');
} finally {
  await client.close();
}

const run = (args) => JSON.parse(execFileSync(npx, ['--no', 'engram', ...args, '--db', db, '--json'], { env, encoding: 'utf8' }));
const again = run(['remember', 'The billing service retries webhooks three times.', '--agent', 'consumer']);
assert.equal(again.action, 'duplicate');
const searched = run(['search', 'webhooks', '--agent', 'consumer']);
assert.equal(searched.results.length, 1);
step('npx engram remember|search --json printed parseable JSON');

// A lossless round trip through the published commands: export the file, import it into a fresh one keeping
// the exported ages (by default a restore restarts the decay clocks), and
// compare the two files row by row.
run(['remember', 'The on-call rotation changes every Monday.', '--agent', 'other']);
const exported = execFileSync(npx, ['--no', 'engram', 'export', '--db', db, '--vectors'], { env, encoding: 'utf8' });
const copy = join(mkdtempSync(join(process.cwd(), 'copy-')), 'memory.db');
const summary = JSON.parse(
  execFileSync(npx, ['--no', 'engram', 'import', '--db', copy, '--json', '--keep-ages'], {
    env,
    input: exported,
    encoding: 'utf8',
  }),
);
assert.ok(summary !== null && typeof summary === 'object');
const { openDatabase } = await import('@engram/store-sqlite/raw');
const rows = (file) => {
  const raw = openDatabase(file, { loadVectorExtension: false });
  try {
    const all = (sql) => raw.prepare(sql).all();
    return {
      memories: all('SELECT * FROM memories ORDER BY id').map(({ rid: _rid, ...rest }) => rest),
      events: all('SELECT * FROM events ORDER BY agent_id, session_id, seq'),
      skills: all('SELECT * FROM skills ORDER BY agent_id, name'),
      cursors: all('SELECT * FROM session_cursors ORDER BY agent_id, session_id'),
    };
  } finally {
    raw.close();
  }
};
const original = rows(db);
assert.equal(original.memories.length, 2);
assert.deepEqual(rows(copy), original);
step('npx engram export | npx engram import copied the file into a fresh one: identical rows');
`;

async function main() {
  const packages = publishedPackages();
  if (packages.length === 0) fail('no published packages found under packages/');
  for (const pkg of packages) {
    if (!existsSync(join(pkg.dir, 'dist'))) fail(`${pkg.name} has no dist/: run \`pnpm build\` first`);
  }
  log(`Node ${process.version}; packages: ${packages.map((p) => `${p.name}@${p.version}`).join(', ')}`);

  const work = mkdtempSync(join(tmpdir(), 'engram-consumer-'));
  const packs = join(work, 'packs');
  const project = join(work, 'project');
  mkdirSync(packs);
  mkdirSync(project);
  try {
    const [pnpm, pnpmArgs] = pnpmCommand();
    for (const pkg of packages) {
      const result = await run(pnpm, [...pnpmArgs, 'pack', '--pack-destination', packs], { cwd: pkg.dir });
      if (result.code !== 0) fail(`pnpm pack ${pkg.name} exited ${result.code}:\n${result.output}`);
    }
    const tarballs = readdirSync(packs)
      .filter((f) => f.endsWith('.tgz'))
      .sort()
      .map((f) => join(packs, f));
    if (tarballs.length !== packages.length)
      fail(`expected ${packages.length} tarballs, found ${tarballs.length}`);
    log(`packed ${tarballs.length} tarballs into ${packs}`);
    const tarballOf = (name) => {
      const prefix = `${name.replace(/^@/, '').replace('/', '-')}-`;
      const match = tarballs.find((t) => {
        const file = t.slice(packs.length + 1);
        return file.startsWith(prefix) && /^\d/.test(file.slice(prefix.length));
      });
      if (match === undefined) fail(`no tarball for ${name}`);
      return match;
    };
    for (const tarball of tarballs) {
      const listing = spawnSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' });
      if (listing.status === 0 && listing.stdout.includes('workspace:')) {
        fail(`${tarball} still has a workspace: dependency`);
      }
    }

    await healthPhase(work, tarballOf);
    if (process.env.ENGRAM_CONSUMER_PHASE === 'health') {
      log('ENGRAM_CONSUMER_PHASE=health: the full phase is skipped');
      return;
    }

    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify({ name: 'engram-consumer', version: '0.0.0', private: true, type: 'module' }, null, 2)}\n`,
    );
    log(
      'npm install of the tarballs into a fresh project (better-sqlite3 may compile from source: 1–2 minutes) …',
    );
    const install = await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--foreground-scripts',
        '--engine-strict',
        ...tarballs,
        // The frameworks the adapters plug into, from npm, beside the packed adapters.
        ...FRAMEWORKS,
        // The official MCP client the CLI phase drives `npx engram mcp` with.
        '@modelcontextprotocol/sdk@^1',
      ],
      {
        cwd: project,
        heartbeat: 'npm install',
        // onnxruntime-node (under @engram/local-onnx) ships its CPU binary in the package; its install script
        // would fetch GPU binaries from the network, which a user skips the same way (see its README).
        env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
      },
    );
    if (install.code !== 0) fail(`npm install exited ${install.code}:\n${install.output.slice(-4000)}`);
    log('installed');

    writeFileSync(join(project, 'consumer.mjs'), CONSUMER_SCRIPT);
    log('running consumer.mjs …');
    const consumer = await run(
      process.execPath,
      ['consumer.mjs', JSON.stringify(packages.map((p) => p.name))],
      {
        cwd: project,
        echo: true,
      },
    );
    if (consumer.code !== 0) fail(`consumer.mjs exited ${consumer.code}`);

    // The facade's README example, exactly as the README shows it, with the default (USE-lite) embedder.
    const readme = readFileSync(join(root, 'packages', 'memory', 'README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    if (example === undefined) fail('packages/memory/README.md has no TypeScript example');
    writeFileSync(join(project, 'example.mjs'), example);
    log('running the @engram/memory README example (example.mjs) …');
    const five = await run(process.execPath, ['example.mjs'], { cwd: project, echo: true });
    if (five.code !== 0) fail(`example.mjs exited ${five.code}`);
    if (five.output !== 'The API server listens on port 8080.\n') {
      fail('example.mjs did not print the remembered fact');
    }
    log('the README example printed the remembered fact');

    // The adapters' examples, as the repository ships them, with their scripted models.
    for (const example of EXAMPLES) {
      writeFileSync(
        join(project, example.file),
        readFileSync(join(root, 'examples', example.dir, example.file)),
      );
      log(`running examples/${example.dir}/${example.file} …`);
      const env = { ...process.env };
      delete env.ENGRAM_OPENAI_BASE_URL;
      const ran = await run(process.execPath, [example.file], { cwd: project, echo: true, env });
      if (ran.code !== 0) fail(`${example.file} exited ${ran.code}`);
      if (!ran.output.includes(example.expect)) fail(`${example.file} did not answer from its memory`);
      const resolves = await run(
        process.execPath,
        ['--input-type=module', '-e', `await import(${JSON.stringify(example.endpoint)});`],
        { cwd: project },
      );
      if (resolves.code !== 0) fail(`${example.file}'s endpoint package ${example.endpoint} does not import`);
    }
    log('the ai-sdk-chat and langchain-rag examples answered from their memories');

    writeFileSync(join(project, 'mcp.mjs'), MCP_SCRIPT);
    log('running mcp.mjs (npx @engram/cli mcp, driven by the MCP SDK client) …');
    const mcp = await run(process.execPath, ['mcp.mjs'], { cwd: project, echo: true });
    if (mcp.code !== 0) fail(`mcp.mjs exited ${mcp.code}`);
    log('PASSED: the packed packages install with npm and work together in a fresh project');
  } finally {
    if (process.env.ENGRAM_KEEP_CONSUMER === '1') log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  if (process.exitCode !== 1) log(`FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
