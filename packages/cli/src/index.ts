/** `@engram/cli`: the `engram` command line and MCP server, also callable from an app's own process. */
export type { CliIo, TextSink } from './io.js';
export { main } from './main.js';
export { runEngram } from './process-entry.js';
