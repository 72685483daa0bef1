#!/usr/bin/env node
/** Writes `docs/cli.md` from the code (see `reference.ts`); run from anywhere inside the repository. */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CLI_REFERENCE_PATH, renderCliReference } from './reference.js';

let dir = resolve(process.env.INIT_CWD ?? process.cwd());
while (!existsSync(join(dir, 'pnpm-workspace.yaml')) && dirname(dir) !== dir) dir = dirname(dir);
writeFileSync(join(dir, CLI_REFERENCE_PATH), renderCliReference());
process.stderr.write(`wrote ${CLI_REFERENCE_PATH}\n`);
