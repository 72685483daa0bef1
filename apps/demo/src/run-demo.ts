#!/usr/bin/env node
/**
 * The demo app: `engram demo` of the published CLI, run from this repository (`npm run demo`). Everything it
 * shows lives in `@engram/cli`; this app is what a user's own app looks like when it embeds the CLI.
 */
import { runEngram } from '@engram/cli';

await runEngram(['demo', ...process.argv.slice(2)]);
