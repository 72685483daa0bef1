#!/usr/bin/env node
// `pnpm bench:postgres`: the PostgreSQL scenario of the benchmark on a real, scratch PostgreSQL server.
//
//   1. finds PostgreSQL's server binaries (ENGRAM_BENCH_PG_BINDIR, else `pg_config --bindir` on PATH, else Debian's
//      /usr/lib/postgresql/<newest>/bin) and checks that pgvector is installed for that server; when it is not,
//      it says how to get it and exits (it downloads nothing);
//   2. `initdb`s a cluster in a new temporary directory and starts `postgres` on a free 127.0.0.1 port, with
//      trust authentication for the local user `engram`. Run as root (which initdb refuses), the cluster is
//      owned by and the server runs as an unprivileged user (ENGRAM_BENCH_PG_USER, default `nobody`);
//   3. runs `bench --only postgres --postgres <url>` of @engram/eval (built: run `pnpm build` first), passing
//      every other argument on (e.g. `--postgres-rows 100000`, `--queries 200`, `--out file.json`); `--only`
//      names other scenarios instead (e.g. `--only workers`: the many-workers scenario on that server);
//   4. stops the server and removes the directory afterwards: on success, on failure and on Ctrl-C.
//
// Server settings: the cluster runs with initdb's defaults. `--recommended` applies the bulk-load settings the
// store's README recommends; `--set name=value` (repeatable) applies any other one. The settings in force are
// printed before the run. Nothing in CI runs this script. Node's standard library only.
import { spawn, spawnSync } from 'node:child_process';
import {
  chownSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BENCH_CLI = join(ROOT, 'packages/eval/dist/bench/cli.js');

/** The bulk-load settings `--recommended` applies (see packages/store-postgres/README.md). */
const RECOMMENDED = {
  shared_buffers: '512MB',
  maintenance_work_mem: '256MB',
  max_wal_size: '4GB',
  checkpoint_timeout: '30min',
  wal_compression: 'on',
  synchronous_commit: 'off',
};

const USAGE = `usage: pnpm bench:postgres [--recommended] [--set name=value]… [bench arguments…]

Starts a scratch PostgreSQL with pgvector (a temporary cluster on a free local port), runs the benchmark's
PostgreSQL scenario on it (bench --only postgres --postgres <url>), then stops and removes the server.
  --only <names>     run these scenarios instead (e.g. workers: 1, 2 and 4 worker processes on that server)
  --recommended      run the server with the bulk-load settings of packages/store-postgres/README.md
  --set name=value   one more server setting (repeatable), e.g. --set synchronous_commit=off
Every other argument goes to the benchmark, e.g. --postgres-rows 100000, --queries 200, --out report.json.
Environment: ENGRAM_BENCH_PG_BINDIR (PostgreSQL's bin directory), ENGRAM_BENCH_PG_USER (the server's user when run as root).`;

function fail(message) {
  process.stderr.write(`bench:postgres: ${message}\n`);
  process.exit(2);
}

/** The directory of PostgreSQL's server binaries. */
function findBindir() {
  const fromEnv = process.env.ENGRAM_BENCH_PG_BINDIR;
  if (fromEnv) return fromEnv;
  const onPath = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (onPath.status === 0 && existsSync(join(onPath.stdout.trim(), 'initdb'))) return onPath.stdout.trim();
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v) && existsSync(join(debian, v, 'bin/initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(debian, versions[0], 'bin');
  }
  return fail(
    'no PostgreSQL server binaries found (set ENGRAM_BENCH_PG_BINDIR, or install Debian\'s "postgresql" package)',
  );
}

/** Exits with directions when pgvector is not installed for the server in `bindir`. */
function checkPgvector(bindir) {
  const major = spawnSync(join(bindir, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.match(
    /(\d+)(?:\.\d+)?/,
  )?.[1];
  const config = spawnSync(join(bindir, 'pg_config'), ['--sharedir'], { encoding: 'utf8' });
  const sharedir = config.status === 0 ? config.stdout.trim() : `/usr/share/postgresql/${major}`;
  if (existsSync(join(sharedir, 'extension/vector.control'))) return;
  fail(`pgvector is not installed for PostgreSQL ${major ?? '?'} (no ${join(sharedir, 'extension/vector.control')}).
Install it, then run this again:
  - Debian/Ubuntu with the package in their archive (Debian 13+, bookworm-backports, or PGDG's apt repository):
      apt-get install postgresql-${major}-pgvector
  - otherwise build it from its source package (needs postgresql-server-dev-${major}, make and a C compiler):
      apt-get source pgvector   # with a deb-src line for a Debian release that has it
      cd pgvector-*/ && make && make install
The store needs pgvector 0.7 or later (HNSW and halfvec).`);
}

/** The user the server runs as: this one, or an unprivileged one when this is root. */
function serverUser() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const name = process.env.ENGRAM_BENCH_PG_USER ?? 'nobody';
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[0] === name);
  if (line === undefined) fail(`running as root, and there is no user "${name}" to run PostgreSQL as`);
  const [, , uid, gid] = line.split(':');
  return { name, uid: Number(uid), gid: Number(gid) };
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseArgs(argv) {
  const settings = {};
  const rest = [];
  let only = 'postgres';
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (a === '--recommended') Object.assign(settings, RECOMMENDED);
    else if (a === '--set') {
      i += 1;
      const kv = argv[i] ?? '';
      const eq = kv.indexOf('=');
      if (eq < 1 || !/^[a-z_.]+$/.test(kv.slice(0, eq))) fail(`--set takes name=value\n${USAGE}`);
      settings[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else if (a === '--only') {
      i += 1;
      only = argv[i] ?? '';
      if (!/^[A-Za-z0-9,]+$/.test(only)) fail(`--only takes scenario names\n${USAGE}`);
    } else if (a === '--postgres') fail(`${a} is set by this script\n${USAGE}`);
    else rest.push(a);
  }
  return { settings, rest, only };
}

async function main() {
  const { settings, rest, only } = parseArgs(process.argv.slice(2));
  if (!existsSync(BENCH_CLI)) fail('the benchmark is not built: run `pnpm build` first');
  const bindir = findBindir();
  checkPgvector(bindir);
  const user = serverUser();
  const asUser = user === null ? {} : { uid: user.uid, gid: user.gid };
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-pg-'));
  const data = join(dir, 'data');
  const logPath = join(dir, 'server.log');
  if (user !== null) chownSync(dir, user.uid, user.gid);
  let server = null;
  let bench = null;
  let stopping = null;

  const stop = async () => {
    stopping ??= (async () => {
      if (bench !== null && bench.exitCode === null) bench.kill('SIGTERM');
      if (server !== null && server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((r) => server.once('exit', r));
        server.kill('SIGINT'); // fast shutdown
        const done = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
        if (!done) server.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      process.stderr.write(`bench:postgres: ${signal}, stopping the server\n`);
      stop().finally(() => process.exit(130));
    });
  }

  try {
    const init = spawnSync(
      join(bindir, 'initdb'),
      ['-D', data, '-U', 'engram', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { cwd: dir, encoding: 'utf8', ...asUser },
    );
    if (init.status !== 0) throw new Error(`initdb failed:\n${init.stderr}`);
    const port = await freePort();
    const flags = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'];
    for (const [k, v] of Object.entries(settings)) flags.push('-c', `${k}=${v}`);
    const log = createWriteStream(logPath);
    server = spawn(join(bindir, 'postgres'), flags, {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...asUser,
    });
    server.stdout.pipe(log);
    server.stderr.pipe(log);
    let ready = false;
    for (let i = 0; i < 120 && !ready; i += 1) {
      if (server.exitCode !== null) break;
      const probe = spawnSync(join(bindir, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)]);
      ready = probe.status === 0;
      if (!ready) await sleep(250);
    }
    if (!ready) {
      await sleep(200);
      throw new Error(`the server did not start; its log:\n${readFileSync(logPath, 'utf8').slice(-2000)}`);
    }
    const url = `postgres://engram@127.0.0.1:${port}/postgres`;
    const shown = spawnSync(
      join(bindir, 'psql'),
      [
        url,
        '-XAtc',
        "SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers', 'maintenance_work_mem', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'synchronous_commit', 'fsync') ORDER BY name",
      ],
      { encoding: 'utf8' },
    );
    const version = spawnSync(join(bindir, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    process.stderr.write(
      `bench:postgres: ${version} on port ${port}${user === null ? '' : ` as ${user.name}`}; settings: ${shown.stdout.trim().split('\n').join(', ')}\n`,
    );
    bench = spawn(
      process.execPath,
      ['--expose-gc', '--max-old-space-size=12288', BENCH_CLI, '--only', only, '--postgres', url, ...rest],
      {
        cwd: join(ROOT, 'packages/eval'),
        stdio: 'inherit',
        // The report names the command that was typed, not the one this script runs.
        env: {
          ...process.env,
          ENGRAM_RUN_COMMAND: JSON.stringify(['bench:postgres', ...process.argv.slice(2)]),
        },
      },
    );
    const code = await new Promise((r) => bench.once('exit', (c, s) => r(c ?? (s === null ? 1 : 128))));
    return code;
  } catch (error) {
    process.stderr.write(`bench:postgres: ${error.message}\n`);
    return 1;
  } finally {
    await stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`bench:postgres: ${error?.message ?? error}\n`);
    process.exit(1);
  },
);
