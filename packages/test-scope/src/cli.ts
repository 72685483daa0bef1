// Usage: tsx src/cli.ts <repoRoot> [--suggest]
// Checks memory-test-scope.json against the real repository and exits 1 on any error. With --suggest it
// also prints, as JSON, entries for the unlisted files (tier from the file name, owning package).
import { resolve } from 'node:path';
import { checkScope } from './check-scope.js';
import { MANIFEST_FILE } from './manifest.js';
import { readRepository } from './repository.js';
import { isTypeTest, owningPackage, tierFromFileName } from './test-files.js';

const args = process.argv.slice(2);
const suggest = args.includes('--suggest');
const root = resolve(args.find((arg) => !arg.startsWith('--')) ?? '.');
const read = readRepository(root);
if (!read.ok) {
  console.error(`INVALID_MANIFEST ${MANIFEST_FILE}: ${read.message}`);
  process.exit(1);
}
const result = checkScope(read.input);
if (result.ok) {
  const { testFiles, packages, byTier, exemptions } = result.summary;
  const tiers = `behavior ${byTier.behavior}, native ${byTier.native}, eval ${byTier.eval}, perf ${byTier.perf}`;
  const exempt = exemptions > 0 ? `; ${exemptions} exempt` : '';
  console.log(`scope: ${testFiles} test files in ${packages} packages, all classified (${tiers})${exempt}`);
} else {
  for (const error of result.errors) console.error(`${error.rule} ${error.path}: ${error.message}`);
  console.error(`scope: ${result.errors.length} error(s) in ${MANIFEST_FILE}`);
  if (suggest) {
    const unlisted = result.errors.filter((error) => error.rule === 'UNLISTED').map((error) => error.path);
    const tests = unlisted
      .filter((path) => !isTypeTest(path))
      .map((path) => ({
        path,
        tier: tierFromFileName(path),
        package: owningPackage(path, read.input.packages)?.name ?? '?',
      }));
    const exemptions = unlisted
      .filter(isTypeTest)
      .map((path) => ({ path, reason: 'type test: checked by pnpm typecheck, not by a vitest tier' }));
    console.log(JSON.stringify({ tests, exemptions }, null, 2));
  }
  process.exit(1);
}
