#!/usr/bin/env node
// The release check, run by the test ladder (and CI) after `pnpm build`: what the release workflow will publish,
// proved on a throwaway copy of the repository before any release happens.
//
//   1. copies the workspace (sources, manifests, changesets, built dist/ folders; no node_modules, no .git)
//      into the OS temp directory;
//   2. runs `changeset version` there, exactly as the release workflow's version PR does: every pending
//      changeset is consumed and the versions are bumped;
//   3. `pnpm pack`s every public package of the copy, and checks each tarball: its version is the bumped one,
//      no `workspace:` range is left, every @engram/* dependency range admits the version being released
//      next to it, the bin and export targets are inside the tarball, and nothing private is depended on;
//   4. installs the tarballs that need no native code (contracts, diagnostics, health-ui) with npm into a
//      fresh project and imports them, so "installable" is tested, not assumed;
//   5. removes the copy (keep it with ENGRAM_KEEP_RELEASE_CHECK=1).
//
// Node's standard library only (plus pnpm, npm and the repository's own changesets CLI).
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const problems = [];
const log = (message) => process.stderr.write(`[release-check] ${message}\n`);

function run(cmd, args, cwd) {
  const result = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** The workspace's packages of a tree: { dir, manifest }. */
function workspace(tree) {
  const found = [];
  for (const group of ['packages', 'apps']) {
    const dir = join(tree, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const manifestPath = join(dir, name, 'package.json');
      if (existsSync(manifestPath)) {
        found.push({ dir: join(dir, name), manifest: JSON.parse(readFileSync(manifestPath, 'utf8')) });
      }
    }
  }
  return found;
}

/** Compares two x.y.z versions (prerelease tags ignored): negative, zero or positive. */
function compare(a, b) {
  const [aMajor, aMinor, aPatch] = a.split('-')[0].split('.').map(Number);
  const [bMajor, bMinor, bPatch] = b.split('-')[0].split('.').map(Number);
  return aMajor - bMajor || aMinor - bMinor || aPatch - bPatch;
}

/** Does one comparator (^x.y.z, ~x.y.z, >=x.y.z, >, <=, <, =, x.y.z) admit `version`? */
function comparatorAdmits(comparator, version) {
  const m = /^(\^|~|>=|<=|>|<|=)?v?(\d+(?:\.\d+){0,2}(?:-[0-9A-Za-z.-]+)?)$/.exec(comparator);
  if (m === null) return false;
  // A partial bound (`<1`, `>=0.2`) is padded with zeros.
  const [core, ...pre] = m[2].split('-');
  const parts = core.split('.');
  while (parts.length < 3) parts.push('0');
  const [op = '=', bound] = [m[1], [parts.join('.'), ...pre].join('-')];
  const cmp = compare(version, bound);
  const [rMajor, rMinor, rPatch] = bound.split('-')[0].split('.').map(Number);
  const [vMajor, vMinor] = version.split('.').map(Number);
  switch (op) {
    case '=':
      return cmp === 0;
    case '>=':
      return cmp >= 0;
    case '>':
      return cmp > 0;
    case '<=':
      return cmp <= 0;
    case '<':
      return cmp < 0;
    case '~':
      return cmp >= 0 && vMajor === rMajor && vMinor === rMinor;
    default: // ^: the left-most non-zero part stays
      if (cmp < 0) return false;
      if (rMajor > 0) return vMajor === rMajor;
      if (rMinor > 0) return vMajor === 0 && vMinor === rMinor;
      return compare(version, `0.0.${rPatch}`) === 0;
  }
}

/** Does the npm range (comparator sets joined by `||`) admit `version`? */
export function rangeAdmits(range, version) {
  return range
    .split('||')
    .map((set) => set.trim().split(/\s+/).filter(Boolean))
    .some((set) => set.length > 0 && set.every((comparator) => comparatorAdmits(comparator, version)));
}

function tarballManifest(tarball) {
  return JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], root));
}

function tarballFiles(tarball) {
  return new Set(
    run('tar', ['-tzf', tarball], root)
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, '')),
  );
}

/** Every target a manifest points at (bin, exports) that a user's import or command would load. */
function targets(manifest) {
  const found = [];
  const bin = typeof manifest.bin === 'string' ? { [manifest.name]: manifest.bin } : (manifest.bin ?? {});
  for (const file of Object.values(bin)) found.push(file);
  const walk = (value) => {
    if (typeof value === 'string') {
      if (value.startsWith('./') && !value.includes('*')) found.push(value);
    } else if (value !== null && typeof value === 'object') {
      for (const inner of Object.values(value)) walk(inner);
    }
  };
  walk(manifest.exports);
  return found.map((file) => file.replace(/^\.\//, ''));
}

const work = mkdtempSync(join(tmpdir(), 'engram-release-check-'));
const copy = join(work, 'repo');
try {
  cpSync(root, copy, {
    recursive: true,
    filter: (source) => {
      const rel = relative(root, source);
      const parts = rel.split(/[\\/]/);
      return !parts.some((p) =>
        ['node_modules', '.git', '.turbo', '.tools', 'test-results', '.engram'].includes(p),
      );
    },
  });
  const before = new Map(workspace(copy).map(({ manifest }) => [manifest.name, manifest.version]));
  const changeset = join(root, 'node_modules', '.bin', 'changeset');
  run(changeset, ['version'], copy);
  const released = workspace(copy);
  const versions = new Map(released.map(({ manifest }) => [manifest.name, manifest.version]));
  const privateNames = new Set(
    released.filter(({ manifest }) => manifest.private === true).map((p) => p.manifest.name),
  );
  const bumped = [...versions].filter(([name, version]) => before.get(name) !== version);
  log(
    `changeset version: ${bumped.length === 0 ? 'nothing pending' : bumped.map(([n, v]) => `${n}@${v}`).join(', ')}`,
  );
  const pending = readdirSync(join(copy, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  if (pending.length > 0) problems.push(`changeset version left ${pending.length} changeset(s) unconsumed`);

  // pnpm pack reads the version of a `workspace:` dependency from the installed dependency: link each package's
  // @engram/* dependencies to their copies (nothing else is needed to pack).
  const dirOf = new Map(released.map(({ dir, manifest }) => [manifest.name, dir]));
  for (const { dir, manifest } of released) {
    const deps = new Set(
      ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'].flatMap((section) =>
        Object.keys(manifest[section] ?? {}).filter((dep) => dirOf.has(dep)),
      ),
    );
    for (const dep of deps) {
      const link = join(dir, 'node_modules', ...dep.split('/'));
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(dirOf.get(dep), link, 'dir');
    }
  }

  const packs = join(work, 'packs');
  mkdirSync(packs);
  const tarballs = new Map();
  for (const { dir, manifest } of released) {
    if (manifest.private === true) continue;
    if (!existsSync(join(dir, 'dist'))) {
      problems.push(`${manifest.name}: no dist/ (run \`pnpm build\` first)`);
      continue;
    }
    const before = new Set(readdirSync(packs));
    run('pnpm', ['pack', '--pack-destination', packs], dir);
    const made = readdirSync(packs).filter((f) => !before.has(f));
    if (made.length !== 1) {
      problems.push(`${manifest.name}: pnpm pack made ${made.length} tarballs`);
      continue;
    }
    const tarball = join(packs, made[0]);
    tarballs.set(manifest.name, tarball);
    const packed = tarballManifest(tarball);
    if (packed.version !== manifest.version) {
      problems.push(`${manifest.name}: tarball version ${packed.version}, expected ${manifest.version}`);
    }
    if (packed.publishConfig?.access !== 'public')
      problems.push(`${manifest.name}: publishConfig.access is not public`);
    for (const section of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const [dep, range] of Object.entries(packed[section] ?? {})) {
        if (range.startsWith('workspace:'))
          problems.push(`${manifest.name}: ${section}.${dep} is still ${range}`);
        if (!dep.startsWith('@engram/')) continue;
        if (privateNames.has(dep)) problems.push(`${manifest.name}: ${section} names the private ${dep}`);
        const next = versions.get(dep);
        if (next === undefined) problems.push(`${manifest.name}: ${section}.${dep} is not in the workspace`);
        else if (!rangeAdmits(range, next)) {
          problems.push(`${manifest.name}: ${section}.${dep} ${range} does not admit the released ${next}`);
        }
      }
    }
    const files = tarballFiles(tarball);
    for (const target of targets(packed)) {
      if (!files.has(target)) problems.push(`${manifest.name}: ${target} is not in the tarball`);
    }
  }
  log(
    `packed ${tarballs.size} public packages: ${[...tarballs.keys()].map((n) => `${n}@${versions.get(n)}`).join(', ')}`,
  );
  if (!tarballs.has('@engram/cli')) problems.push('@engram/cli was not packed: the CLI must be published');

  if (problems.length === 0) {
    const project = join(work, 'project');
    mkdirSync(project);
    const light = ['@engram/contracts', '@engram/diagnostics', '@engram/health-ui'];
    run('npm', ['init', '-y'], project);
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--ignore-scripts',
        ...light.map((n) => tarballs.get(n)),
      ],
      project,
    );
    const script = light.map((name) => `await import(${JSON.stringify(name)});`).join(' ');
    run(process.execPath, ['--input-type=module', '-e', script], project);
    for (const name of light) {
      const installed = JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8'));
      if (installed.version !== versions.get(name)) {
        problems.push(`${name}: installed ${installed.version}, expected ${versions.get(name)}`);
      }
    }
    log(`installed and imported ${light.join(', ')} from the new tarballs`);
  }
} finally {
  if (process.env.ENGRAM_KEEP_RELEASE_CHECK === '1') log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

if (problems.length > 0) {
  for (const problem of problems) log(`FAILED: ${problem}`);
  process.exitCode = 1;
} else {
  log(
    'PASSED: changeset version, then pnpm pack, gives installable tarballs with consistent versions and ranges',
  );
}
