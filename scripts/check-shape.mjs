#!/usr/bin/env node
// The shape check, run by `pnpm lint`. It keeps the architecture described in ARCHITECTURE.md from drifting:
//
//   1. layers   — a workspace package depends only on packages of a lower layer (LAYERS below); the
//                 observers (diagnostics, health-ui) depend on @engram/contracts and nothing else of ours;
//   2. tiers    — every test tier in turbo.json waits for the previous tier of EVERY workspace package
//                 (`--fix` regenerates those lists from the workspace, so they are never edited by hand);
//   3. rules    — no package outside @engram/contracts re-declares a name that contracts exports, or writes
//                 its own CJK character class;
//   4. links    — no Markdown link, source comment or script path points outside the repository;
//   5. native   — only the SQLite adapter and the composition roots depend on better-sqlite3 (or the adapter)
//                 at run time; a port package (@engram/contracts, @engram/store) reaches no native module;
//   6. surface  — each entry point of a published package exports at most SURFACE_LIMIT names;
//   7. docs     — the README stays within README_LIMIT lines and each package README within PACKAGE_README_LIMIT,
//                 and no README, document or code comment carries run history ("this run", "went from … to").
//
// Node's standard library only. Exit code 1 with one line per finding; `--fix` rewrites turbo.json.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fix = process.argv.includes('--fix');
const findings = [];
const report = (rule, message) => findings.push(`${rule}: ${message}`);

// ---------------------------------------------------------------------------------------------------------
// The workspace.
function workspacePackages() {
  const found = [];
  for (const group of ['packages', 'apps']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const manifestPath = join(dir, name, 'package.json');
      if (!existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
      found.push({ dir: join(group, name), manifest });
    }
  }
  return found;
}
const packages = workspacePackages();

// ---------------------------------------------------------------------------------------------------------
// 1. Layers. A lower number is a lower layer; a package may depend on strictly lower layers only.
const LAYERS = {
  '@engram/contracts': 0,
  '@engram/test-scope': 0,
  // Test helpers: above the contracts they use, below every package whose tests use them.
  '@engram/test-support': 0.5,
  '@engram/embedder-deterministic': 1,
  '@engram/embedder-use': 1,
  '@engram/local-onnx': 1,
  '@engram/provider-openai': 1,
  '@engram/store': 1,
  '@engram/diagnostics': 1,
  '@engram/health-ui': 1,
  '@engram/retrieval': 2,
  '@engram/store-postgres': 2,
  '@engram/store-sqlite': 2,
  // The agent-facing write path: above the retriever it searches with, below maintenance and the facade.
  '@engram/tools': 2.5,
  '@engram/maintenance': 3,
  '@engram/eval': 4,
  '@engram/memory': 4,
  '@engram/reliability': 5,
  '@engram/ai-sdk': 5,
  '@engram/langchain': 5,
  // The local memory inspector: over the facade, below the CLI that starts it.
  '@engram/inspector': 5,
  '@engram/cli': 6,
  '@engram/demo': 7,
};
/** Observers: they may know the contracts and nothing else of ours, at run time or in tests. */
const OBSERVERS = new Set(['@engram/diagnostics', '@engram/health-ui']);

for (const { dir, manifest } of packages) {
  const layer = LAYERS[manifest.name];
  if (layer === undefined) {
    report('layers', `${dir}: ${manifest.name} has no layer in scripts/check-shape.mjs (add it)`);
    continue;
  }
  const sections = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'];
  for (const section of sections) {
    for (const dep of Object.keys(manifest[section] ?? {})) {
      if (!dep.startsWith('@engram/')) continue;
      // Test helpers (private, no native code) may serve an observer's own tests.
      const testHelper = section === 'devDependencies' && dep === '@engram/test-support';
      if (OBSERVERS.has(manifest.name) && dep !== '@engram/contracts' && !testHelper) {
        report(
          'layers',
          `${manifest.name} (${section}) depends on ${dep}: an observer depends on @engram/contracts only`,
        );
        continue;
      }
      const depLayer = LAYERS[dep];
      if (depLayer === undefined) continue; // reported on its own package
      // Tests may use a package of the same layer (the store's tests embed with the deterministic embedder).
      const allowed = section === 'devDependencies' ? depLayer <= layer : depLayer < layer;
      if (!allowed) {
        report(
          'layers',
          `${manifest.name} (layer ${layer}, ${section}) depends on ${dep} (layer ${depLayer}): arrows point down only`,
        );
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 2. The tier order in turbo.json: each tier's task waits for the previous tier of every package.
const TIERS = ['test:memory', 'test:memory:native', 'test:memory:eval', 'test:memory:perf'];
const turboPath = join(root, 'turbo.json');
const turbo = JSON.parse(readFileSync(turboPath, 'utf8'));
let turboChanged = false;
for (let i = 1; i < TIERS.length; i += 1) {
  const task = turbo.tasks[TIERS[i]];
  const previous = TIERS[i - 1];
  const expected = packages
    .filter(({ manifest }) => manifest.scripts?.[previous] !== undefined)
    .map(({ manifest }) => `${manifest.name}#${previous}`)
    .sort();
  const current = (task.dependsOn ?? []).filter((entry) => entry.includes('#'));
  const missing = expected.filter((entry) => !current.includes(entry));
  const extra = current.filter((entry) => !expected.includes(entry));
  if (missing.length === 0 && extra.length === 0) continue;
  if (fix) {
    task.dependsOn = [...(task.dependsOn ?? []).filter((entry) => !entry.includes('#')), ...expected];
    turboChanged = true;
  } else {
    report(
      'tiers',
      `turbo.json ${TIERS[i]} must wait for ${previous} of every package: missing [${missing.join(', ')}], unknown [${extra.join(', ')}] (run \`node scripts/check-shape.mjs --fix\`)`,
    );
  }
}
if (turboChanged) writeFileSync(turboPath, `${JSON.stringify(turbo, null, 2)}\n`);

// ---------------------------------------------------------------------------------------------------------
// Source files tracked (or new and not ignored) by git.
function trackedFiles() {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return out.split('\n').filter((file) => file !== '' && existsSync(join(root, file)));
}
const files = trackedFiles();
const sourceFiles = files.filter((file) => /\.(ts|mts|mjs|js)$/.test(file) && !file.includes('/fixtures/'));

// ---------------------------------------------------------------------------------------------------------
// 3. One rule, one place: names exported by @engram/contracts are declared nowhere else.
const contractsIndex = join(root, 'packages/contracts/src/index.ts');
if (existsSync(contractsIndex)) {
  // Every name the root exports, through its subpath entries too (`export *` is followed).
  const names = new Set([...exportedNames(contractsIndex)].filter((name) => /^[A-Za-z_$][\w$]*$/.test(name)));
  const alternatives = [...names].join('|');
  // Declarations only: an import specifier (`type X,`) or a use is not a copy.
  const declaration = new RegExp(
    String.raw`^\s*(?:export\s+)?(?:declare\s+)?(?:(?:async\s+)?function\*?\s+(${alternatives})\b|(?:const|let|var)\s+(${alternatives})\s*[:=]|(?:abstract\s+)?class\s+(${alternatives})\b|interface\s+(${alternatives})\b|type\s+(${alternatives})\s*[<=]|enum\s+(${alternatives})\b)`,
  );
  for (const file of sourceFiles) {
    if (!file.startsWith('packages/') && !file.startsWith('apps/')) continue;
    if (file.startsWith('packages/contracts/')) continue;
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (names.size > 0) {
        const match = declaration.exec(line);
        if (match) {
          const name = match.slice(1).find((group) => group !== undefined);
          report('rules', `${file}:${index + 1} re-declares ${name}, which @engram/contracts exports`);
        }
      }
      // A CJK range written by hand (U+4E00, U+3040, U+AC00 as the start of a class) is a copy of the rule.
      // A class that is another rule (a versioned embedder's features, terminal column width) says so on the
      // lines just before: `check-shape: not the CJK rule — <why>`.
      const allowed = lines
        .slice(Math.max(0, index - 3), index)
        .some((l) => l.includes('check-shape: not the CJK rule'));
      if (
        !allowed &&
        /\\u\{?(?:4e00|4E00|3040|ac00|AC00)\}?-|\\p\{(?:Script|sc|scx|Script_Extensions)=(?:Han|Hani|Hangul|Hang|Hiragana|Katakana)\}/.test(
          line,
        )
      ) {
        report(
          'rules',
          `${file}:${index + 1} writes its own CJK character class: use the one in @engram/contracts`,
        );
      }
    });
  }
} else {
  report('rules', 'packages/contracts/src/index.ts is missing');
}

// ---------------------------------------------------------------------------------------------------------
// 4. Links and paths stay inside the repository.
const textFiles = files.filter(
  (file) => /\.(md|ts|mts|mjs|js|json|ya?ml)$/.test(file) && file !== 'pnpm-lock.yaml',
);
const outside = [
  [/\.\.\/shared\b/, 'points at ../shared (outside the repository)'],
  [/\/work\/(?:shared|main|wt)\b/, 'names a path of a developer machine'],
  [/\bDESIGN\.md\b/, 'cites DESIGN.md, which is not in the repository (use ARCHITECTURE.md)'],
  [/\bissue\s+#?\d+\b/i, 'cites an issue number instead of saying what it means'],
];
for (const file of textFiles) {
  if (file === 'scripts/check-shape.mjs' || file.startsWith('.changeset/')) continue;
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    for (const [pattern, why] of outside) {
      if (pattern.test(line)) report('links', `${file}:${index + 1} ${why}`);
    }
  });
  if (!file.endsWith('.md')) continue;
  for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const path = target.split('#')[0];
    if (path === '') continue;
    const absolute = resolve(root, dirname(file), decodeURIComponent(path));
    const rel = relative(root, absolute);
    if (rel.startsWith('..')) report('links', `${file}: link ${target} leaves the repository`);
    else if (!existsSync(absolute)) report('links', `${file}: link ${target} points at nothing`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// 5. Native code stays at the edge.
const RUNTIME_SECTIONS = ['dependencies', 'peerDependencies', 'optionalDependencies'];
/** What loads SQLite's native module: the drivers, the vector extension, and the adapter that uses them. */
const SQLITE_PACKAGES = new Set([
  'better-sqlite3',
  'better-sqlite3-multiple-ciphers',
  'sqlite-vec',
  '@engram/store-sqlite',
]);
/** The SQLite adapter and the composition roots: the packages that choose a store for their user. */
const SQLITE_AT_RUN_TIME = new Set([
  '@engram/store-sqlite',
  '@engram/memory',
  '@engram/cli',
  '@engram/eval',
  '@engram/reliability',
  '@engram/demo',
]);
/** The ports: installing one compiles and downloads nothing native, in its tests neither. */
const PORTS = ['@engram/contracts', '@engram/store'];
/** Native modules by name (some ship prebuilt binaries with no build manifest to recognise). */
const NATIVE_NAMES =
  /^(?:better-sqlite3.*|sqlite-vec.*|pg-native|libpq|onnxruntime-node|@tensorflow\/tfjs-node.*|sharp|canvas|duckdb.*)$/;
/** What a native module's manifest depends on to build or fetch its binary. */
const NATIVE_TOOLS = [
  'node-gyp-build',
  'prebuild-install',
  'bindings',
  'node-addon-api',
  '@mapbox/node-pre-gyp',
  'cmake-js',
];

for (const { manifest } of packages) {
  if (SQLITE_AT_RUN_TIME.has(manifest.name)) continue;
  for (const section of RUNTIME_SECTIONS) {
    for (const dep of Object.keys(manifest[section] ?? {})) {
      if (!SQLITE_PACKAGES.has(dep)) continue;
      report(
        'native',
        `${manifest.name} (${section}) depends on ${dep}: only the SQLite adapter (@engram/store-sqlite) and the composition roots (${[...SQLITE_AT_RUN_TIME].slice(1).join(', ')}) load better-sqlite3 at run time; take the store as the port (@engram/store) and let the composition root pass the SQLite store in`,
      );
    }
  }
}

/** The installed manifest of `name` as seen from `fromDir` (node's lookup, following pnpm's links), or null. */
function installed(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(candidate)) {
      const real = realpathSync(candidate);
      return { dir: dirname(real), manifest: JSON.parse(readFileSync(real, 'utf8')) };
    }
    if (dirname(dir) === dir) return null;
  }
}
function isNative(name, found) {
  if (NATIVE_NAMES.test(name)) return true;
  if (found === null) return false;
  const { dir, manifest } = found;
  if (manifest.gypfile === true || existsSync(join(dir, 'binding.gyp'))) return true;
  const deps = { ...manifest.dependencies, ...manifest.optionalDependencies };
  if (NATIVE_TOOLS.some((tool) => tool in deps)) return true;
  return /node-gyp|prebuild|node-pre-gyp/.test(manifest.scripts?.install ?? '');
}
const byName = new Map(packages.map((entry) => [entry.manifest.name, entry]));
for (const port of PORTS) {
  const entry = byName.get(port);
  if (entry === undefined) continue;
  // Every section of the port itself (its tests included), then what those install at run time.
  const queue = [
    { name: port, via: [], dir: join(root, entry.dir), sections: ['devDependencies', ...RUNTIME_SECTIONS] },
  ];
  const seen = new Set();
  while (queue.length > 0) {
    const { name, via, dir, sections } = queue.shift();
    const manifest =
      name === port ? entry.manifest : (byName.get(name)?.manifest ?? installed(name, dir)?.manifest);
    if (manifest === undefined || manifest === null) continue;
    for (const section of sections) {
      for (const dep of Object.keys(manifest[section] ?? {})) {
        if (seen.has(dep) || dep === port) continue;
        seen.add(dep);
        const path = [...via, dep];
        const workspace = byName.get(dep);
        if (workspace !== undefined) {
          if (SQLITE_PACKAGES.has(dep) || dep === '@engram/store-postgres') {
            report(
              'native',
              `${port} reaches the adapter ${path.join(' → ')}: a port package depends on no adapter`,
            );
            continue;
          }
          queue.push({ name: dep, via: path, dir: join(root, workspace.dir), sections: RUNTIME_SECTIONS });
          continue;
        }
        const found = installed(dep, dir);
        if (isNative(dep, found)) {
          report(
            'native',
            `${port} reaches the native module ${path.join(' → ')}: a port package (${PORTS.join(', ')}) has no native dependency, in its tests neither`,
          );
          continue;
        }
        if (found !== null)
          queue.push({
            name: dep,
            via: path,
            dir: found.dir,
            sections: ['dependencies', 'optionalDependencies'],
          });
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 6. A public surface fits one screen: each entry point a published package exports names at most this many
// things (types included). The widest today is @engram/store's root, the store port's vocabulary.
const SURFACE_LIMIT = 100;
/** Entries exempt from the limit, each for a stated reason. */
const WIDE_ENTRIES = {
  '@engram/contracts': 'the compatibility barrel of its four subpath entries, which are checked one by one',
  '@engram/store/port-kit': "the store adapters' kit, with no compatibility promise beyond them",
};
/** The names a source module exports (`export *` from a relative module followed). */
function exportedNames(file, seen = new Set()) {
  const names = new Set();
  if (seen.has(file) || !existsSync(file)) return names;
  seen.add(file);
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  for (const block of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of block[1].split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name) names.add(name);
    }
  }
  for (const match of text.matchAll(
    /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|abstract\s+class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm,
  )) {
    names.add(match[1]);
  }
  for (const match of text.matchAll(/export\s+\*\s+as\s+([\w$]+)\s+from/g)) names.add(match[1]);
  for (const match of text.matchAll(/export\s+\*\s+from\s+'(\.[^']+)'/g)) {
    for (const name of exportedNames(resolve(dirname(file), match[1].replace(/\.js$/, '.ts')), seen))
      names.add(name);
  }
  return names;
}
for (const { dir, manifest } of packages) {
  if (manifest.private === true) continue;
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const built = typeof target === 'string' ? target : (target?.default ?? target?.import);
    if (typeof built !== 'string' || !built.startsWith('./dist/') || !built.endsWith('.js')) continue;
    const entryName = subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`;
    if (entryName in WIDE_ENTRIES) continue;
    const source = join(dir, built.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
    const count = exportedNames(join(root, source)).size;
    if (count > SURFACE_LIMIT) {
      report(
        'surface',
        `${source} (${entryName}) exports ${count} names, more than ${SURFACE_LIMIT}: export what a user of the package needs, and reach internals by path or a subpath entry`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 7. Docs are for users: short READMEs, and what holds rather than how it got there. Measured figures live in
//    the documents `pnpm docs:figures` renders from reports, and history in the commits.
const README_LIMIT = 220;
const PACKAGE_README_LIMIT = 250;
const HISTORY = [
  [/\bthis run\b/i, '"this run"'],
  [/\bprevious version\b/i, '"previous version"'],
  [/\bA\/A\b/, '"A/A"'],
  [/\bnot landed\b/i, '"not landed"'],
  [/\bwent from\b.*\bto\b/i, '"went from … to"'],
];
const lineCount = (file) => readFileSync(join(root, file), 'utf8').replace(/\n$/, '').split('\n').length;
for (const file of files) {
  if (file === 'README.md' && lineCount(file) > README_LIMIT) {
    report('docs', `README.md has ${lineCount(file)} lines, more than ${README_LIMIT}: move detail to docs/`);
  }
  if (/^packages\/[^/]+\/README\.md$/.test(file) && lineCount(file) > PACKAGE_README_LIMIT) {
    report(
      'docs',
      `${file} has ${lineCount(file)} lines, more than ${PACKAGE_README_LIMIT}: move detail to docs/`,
    );
  }
  const markdown = file.endsWith('.md') && !file.startsWith('.changeset/') && !file.endsWith('CHANGELOG.md');
  const code = /\.(ts|mts|mjs|js)$/.test(file) && file !== 'scripts/check-shape.mjs';
  if (!markdown && !code) continue;
  readFileSync(join(root, file), 'utf8')
    .split('\n')
    .forEach((line, index) => {
      if (code && !/^\s*(?:\/\/|\*|\/\*)/.test(line)) return;
      for (const [pattern, phrase] of HISTORY) {
        if (pattern.test(line))
          report('docs', `${file}:${index + 1} says ${phrase}: say what holds, keep history in commits`);
      }
    });
}

// ---------------------------------------------------------------------------------------------------------
if (findings.length > 0) {
  process.stderr.write(`${findings.map((line) => `✗ ${line}`).join('\n')}\n`);
  process.stderr.write(`check-shape: ${findings.length} finding(s)\n`);
  process.exit(1);
}
process.stdout.write(
  `check-shape: ${packages.length} packages in their layers, tiers derived, rules in one place, links inside the repository, native code at the edge, surfaces within ${SURFACE_LIMIT} names, docs for users\n`,
);
