/** The app's version, read at run time from its package.json, so `--version` and the MCP server never drift. */
import { readFileSync } from 'node:fs';

/** The app's package.json (next to `src/` and `dist/`). */
const APP_MANIFEST = new URL('../package.json', import.meta.url);

/** The `version` of the package.json at `manifest` (default the app's own); `0.0.0` when it has none. */
export function appVersion(manifest: URL = APP_MANIFEST): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(manifest, 'utf8'));
  } catch {
    return '0.0.0';
  }
  const version = (parsed as { version?: unknown } | null)?.version;
  return typeof version === 'string' && version !== '' ? version : '0.0.0';
}
