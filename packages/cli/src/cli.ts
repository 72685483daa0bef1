#!/usr/bin/env node
/** The `engram` executable. */
import { runEngram } from './process-entry.js';

await runEngram(process.argv.slice(2));
