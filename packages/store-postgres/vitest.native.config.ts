import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import { tierConfig } from '../../vitest.shared.ts';

// The native tier, plus one PostgreSQL for the package (PGlite over the socket, or ENGRAM_PG_URL). The files
// share that one database, so they run one at a time.
const pgSetup = fileURLToPath(new URL('./src/testing/global-setup.ts', import.meta.url));
const base = tierConfig('native');
const setups = base.test?.globalSetup;
export default mergeConfig(
  base,
  defineConfig({
    test: {
      globalSetup: [...(Array.isArray(setups) ? setups : setups === undefined ? [] : [setups]), pgSetup],
      fileParallelism: false,
    },
  }),
);
