/**
 * The inspector is opt-in: nothing in the library starts it. No package but the CLI (which runs it on
 * `engram inspect`) depends on it, so the facade, the middleware and the MCP server cannot expose it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('who can reach the inspector', () => {
  it('is only the CLI: no other workspace package depends on @engram/inspector', () => {
    const dependents: string[] = [];
    for (const group of ['packages', 'apps']) {
      for (const name of readdirSync(join(ROOT, group))) {
        let manifest: {
          name?: string;
          dependencies?: object;
          peerDependencies?: object;
          optionalDependencies?: object;
        };
        try {
          manifest = JSON.parse(readFileSync(join(ROOT, group, name, 'package.json'), 'utf8'));
        } catch {
          continue;
        }
        const runtime = {
          ...manifest.dependencies,
          ...manifest.peerDependencies,
          ...manifest.optionalDependencies,
        };
        if ('@engram/inspector' in runtime) dependents.push(manifest.name ?? name);
      }
    }
    expect(dependents.filter((name) => name !== '@engram/cli')).toEqual([]);
  });

  it('binds to 127.0.0.1 only: the server takes no host option', () => {
    const server = readFileSync(fileURLToPath(new URL('./server.ts', import.meta.url)), 'utf8');
    expect(server).toContain("const host = '127.0.0.1';");
    expect(server).not.toMatch(/config\.host/);
  });
});
