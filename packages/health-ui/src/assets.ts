import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** One file the health page needs, with the URL path it is served at (relative to the page). */
export interface HealthUiAsset {
  /** Path below the page's base, e.g. `/` or `/app/main.js`. */
  readonly urlPath: string;
  /** Absolute path of the shipped file. */
  readonly filePath: string;
  readonly contentType: string;
}

/**
 * The built, shipped assets of the health page: one HTML shell, one stylesheet, ES modules (the page's own and
 * the closed-enums module of `@engram/contracts`).
 */
export interface HealthUiAssets {
  /** The HTML shell, served at `/`. */
  readonly index: HealthUiAsset;
  /** Every asset, the shell included. */
  readonly files: readonly HealthUiAsset[];
}

/**
 * The browser modules compiled from `src/browser/*.ts` (tests excluded). A behavior test pins this list to
 * the source directory and the built output, so a new module cannot be forgotten here.
 */
export const BROWSER_MODULES: readonly string[] = Object.freeze([
  'api.js',
  'charts.js',
  'dom.js',
  'format.js',
  'i18n.js',
  'main.js',
  'messages-zh-cn.js',
  'messages.js',
  'render-background.js',
  'render-kit.js',
  'render-process.js',
  'render-processes.js',
  'render-retrieval.js',
  'render-store.js',
  'render.js',
]);

/**
 * URL (below the page) of the `@engram/contracts` enums module: the page's modules import it as
 * `./contracts/enums.js`, and the handler answers with the file the contracts build emitted, unchanged.
 */
export const CONTRACTS_ENUMS_URL_PATH = '/app/contracts/enums.js';

const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const SVG = 'image/svg+xml';

// Resolved from the package root, so the same code finds the files from `src/` (tests) and `dist/` (npm).
function shipped(relative: string): string {
  return fileURLToPath(new URL(`../${relative}`, import.meta.url));
}

// The contracts package exports its import-free enums module as `@engram/contracts/enums`.
const contractsEnums = createRequire(import.meta.url).resolve('@engram/contracts/enums');

const index: HealthUiAsset = Object.freeze({
  urlPath: '/',
  filePath: shipped('assets/index.html'),
  contentType: HTML,
});

/** Paths and content types of the health page's built assets, located relative to this module. */
export const healthUiAssets: HealthUiAssets = Object.freeze({
  index,
  files: Object.freeze([
    index,
    Object.freeze({ urlPath: '/health.css', filePath: shipped('assets/health.css'), contentType: CSS }),
    Object.freeze({ urlPath: '/favicon.svg', filePath: shipped('assets/favicon.svg'), contentType: SVG }),
    ...BROWSER_MODULES.map((name) =>
      Object.freeze({ urlPath: `/app/${name}`, filePath: shipped(`dist/browser/${name}`), contentType: JS }),
    ),
    Object.freeze({ urlPath: CONTRACTS_ENUMS_URL_PATH, filePath: contractsEnums, contentType: JS }),
  ]),
});
