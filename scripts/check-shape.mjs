#!/usr/bin/env node
// The shape check, run by `pnpm lint`. It keeps the architecture described in ARCHITECTURE.md from drifting:
//
//   1. layers   — a workspace package depends only on packages of a lower layer (LAYERS below); the
//                 observers (diagnostics, health-ui) depend on @engram/contracts and nothing else of ours;
//   2. tiers    — every test tier in turbo.json waits for the previous tier of EVERY workspace package
//                 (`--fix` regenerates those lists from the workspace, so they are never edited by hand);
//   3. rules    — no package outside @engram/contracts re-declares a name that contracts exports, or writes
//                 its own CJK character class;
//   4. links    — no Markdown link, source comment or script path points outside the repository.
//
// Node's standard library only. Exit code 1 with one line per finding; `--fix` rewrites turbo.json.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  const text = readFileSync(contractsIndex, 'utf8');
  const names = new Set();
  for (const block of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of block[1].split(',')) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name && /^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
    }
  }
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
if (findings.length > 0) {
  process.stderr.write(`${findings.map((line) => `✗ ${line}`).join('\n')}\n`);
  process.stderr.write(`check-shape: ${findings.length} finding(s)\n`);
  process.exit(1);
}
process.stdout.write(
  `check-shape: ${packages.length} packages in their layers, tiers derived, rules in one place, links inside the repository\n`,
);
