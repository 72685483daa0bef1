import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** The four test tiers; a test file's suffix names its tier (see memory-test-scope.json). */
export type Tier = 'behavior' | 'native' | 'eval' | 'perf';

const suffix: Record<Exclude<Tier, 'behavior'>, string> = {
  native: '.native.test.ts',
  eval: '.eval.test.ts',
  perf: '.perf.test.ts',
};

const nativeGate = fileURLToPath(new URL('./scripts/native-gate.ts', import.meta.url));

/** Builds the vitest config of one tier; run from a package directory (the root is the cwd). */
export function tierConfig(tier: Tier): ViteUserConfig {
  const include = tier === 'behavior' ? ['src/**/*.test.ts'] : [`src/**/*${suffix[tier]}`];
  const exclude =
    tier === 'behavior'
      ? ['**/node_modules/**', '**/dist/**', ...Object.values(suffix).map((s) => `**/*${s}`)]
      : ['**/node_modules/**', '**/dist/**'];
  return defineConfig({
    test: {
      include,
      exclude,
      environment: 'node',
      // A package without tests in this tier is fine; the scope manifest proves every test file has a tier.
      passWithNoTests: true,
      // The native gate fails the whole tier, with a message naming what is missing, before any test runs.
      ...(tier === 'behavior' ? {} : { globalSetup: [nativeGate] }),
      testTimeout: tier === 'behavior' ? 10_000 : tier === 'native' ? 120_000 : 900_000,
      hookTimeout: tier === 'behavior' ? 10_000 : 300_000,
      pool: 'forks',
      fileParallelism: tier === 'behavior' || tier === 'native',
    },
  });
}
