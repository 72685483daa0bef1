#!/usr/bin/env node
// One entry point for the README's two commands, on a machine that has only Node 20 and npm:
//   npm run demo   → installs pnpm (pinned by packageManager) and the dependencies, builds, runs the demo
//   npm test       → the same set-up, then the whole test ladder
//   npm run tarballs → the same set-up, then every published package as a tarball in .packs/, to install into
//                      a project of your own before the packages are on npm
// It uses nothing but Node's standard library, because nothing else is installed yet when it starts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Nothing phones home: turbo's anonymous telemetry stays off for every child process.
process.env.TURBO_TELEMETRY_DISABLED = '1';
process.env.DO_NOT_TRACK = '1';
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const pnpmVersion = String(manifest.packageManager).replace(/^pnpm@/, '');
const [command = 'setup', ...rest] = process.argv.slice(2);

function log(message) {
  process.stderr.write(`[engram] ${message}\n`);
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(cmd, args, what, cwd = root) {
  const status = run(cmd, args, { cwd });
  if (status !== 0) {
    log(`${what} failed (exit ${status})`);
    process.exit(status);
  }
}

function pnpmOnPath() {
  const probe = spawnSync('pnpm', ['--version'], { cwd: root, encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() : null;
}

/** Returns the pnpm executable to use, installing the pinned version when it is missing. */
function ensurePnpm() {
  if (pnpmOnPath() === pnpmVersion) return 'pnpm';
  const local = join(root, '.tools', 'node_modules', '.bin', 'pnpm');
  if (existsSync(local)) return local;
  log(`installing pnpm@${pnpmVersion} (npm i -g) …`);
  if (run('npm', ['install', '--global', `pnpm@${pnpmVersion}`]) === 0 && pnpmOnPath() === pnpmVersion)
    return 'pnpm';
  log('a global install was not possible; installing pnpm into .tools/ instead …');
  must(
    'npm',
    ['install', '--prefix', join(root, '.tools'), '--no-save', `pnpm@${pnpmVersion}`],
    'installing pnpm',
  );
  return local;
}

function ensureChromium() {
  // chromium drives the health page's browser test; the CJK font lets its Chinese screenshot render glyphs.
  if (existsSync('/usr/bin/chromium') && existsSync('/usr/share/fonts/opentype/noto')) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    log(
      "the browser test needs Debian's chromium and a CJK font: run `sudo apt-get install -y chromium fonts-noto-cjk` once, then re-run.",
    );
    process.exit(1);
  }
  log('installing Debian chromium for the browser test (apt-get) …');
  must('apt-get', ['update'], 'apt-get update');
  must(
    'apt-get',
    ['install', '-y', '--no-install-recommends', 'chromium', 'fonts-noto-cjk'],
    'apt-get install chromium',
  );
}

const pnpm = ensurePnpm();
const frozen = process.env.CI ? ['--frozen-lockfile'] : [];
log('installing dependencies (better-sqlite3 compiles from source on first install: about a minute) …');
must(pnpm, ['install', ...frozen], 'pnpm install');
log('building …');
must(pnpm, ['run', 'build'], 'build');

switch (command) {
  case 'setup':
    break;
  case 'demo':
    // The demo's database lives under .engram/ in the directory the command was started from.
    process.exit(
      run(process.execPath, [join(root, 'apps', 'demo', 'dist', 'run-demo.js'), ...rest], {
        cwd: process.env.INIT_CWD ?? process.cwd(),
      }),
    );
    break;
  case 'pack': {
    // Every package under packages/ that is not private, packed as npm would publish it (`workspace:^`
    // becomes the real version), so installing all the tarballs at once resolves @engram/* among them.
    const packs = join(root, '.packs');
    rmSync(packs, { recursive: true, force: true });
    mkdirSync(packs);
    for (const dir of readdirSync(join(root, 'packages')).sort()) {
      const pkgFile = join(root, 'packages', dir, 'package.json');
      if (!existsSync(pkgFile) || JSON.parse(readFileSync(pkgFile, 'utf8')).private === true) continue;
      must(
        pnpm,
        ['pack', '--pack-destination', packs],
        `packing packages/${dir}`,
        join(root, 'packages', dir),
      );
    }
    log(`packed into ${packs}. In your project (Node 20+):`);
    log(`  npm install ${packs}/*.tgz`);
    break;
  }
  case 'test':
    ensureChromium();
    process.exit(run(pnpm, ['run', 'test:ladder']));
    break;
  default:
    log(`unknown command: ${command} (expected setup, demo, pack or test)`);
    process.exit(2);
}
