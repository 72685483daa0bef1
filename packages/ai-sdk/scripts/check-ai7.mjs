#!/usr/bin/env node
// `pnpm --filter @engram/ai-sdk check:ai7`: type-checks the adapter against AI SDK 7. AI SDK 7 needs Node 22 to
// run, so on Node 20 it is checked by its types: the newest `ai@7` (or the version given as the first argument)
// is installed from the npm registry into a temporary directory — never into the workspace or its lockfile — and
// the adapter's source and `scripts/ai7-usage.ts` (what a user writes) are compiled against its declarations with
// `tsconfig.ai7.json`. Exit code 0 when everything compiles; the compiler's findings otherwise.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const spec = `ai@${process.argv[2] ?? '7'}`;
const dir = mkdtempSync(join(tmpdir(), 'engram-ai7-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let code = 0;
try {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'engram-ai7-check', private: true }));
  execFileSync(
    npm,
    [
      'install',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--engine-strict=false',
      '--loglevel=error',
      spec,
      'zod@^4',
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const installed = JSON.parse(readFileSync(join(dir, 'node_modules', 'ai', 'package.json'), 'utf8'));
  const provider = JSON.parse(
    readFileSync(join(dir, 'node_modules', '@ai-sdk', 'provider', 'package.json'), 'utf8'),
  );
  console.log(
    `check:ai7: ai ${installed.version} (@ai-sdk/provider ${provider.version}), Node ${process.version}`,
  );
  const tsconfig = join(dir, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(pkg, 'tsconfig.ai7.json'),
      compilerOptions: {
        paths: {
          ai: [join(dir, 'node_modules', 'ai', 'dist', 'index.d.ts')],
          '@ai-sdk/provider': [join(dir, 'node_modules', '@ai-sdk', 'provider', 'dist', 'index.d.ts')],
        },
      },
    }),
  );
  const tsc = createRequire(join(pkg, 'package.json')).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', tsconfig, '--pretty', 'false'], {
      cwd: pkg,
      stdio: 'inherit',
    });
    console.log(`check:ai7: the adapter compiles against ai ${installed.version}`);
  } catch {
    console.error(`check:ai7: the adapter does NOT compile against ai ${installed.version}`);
    code = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
