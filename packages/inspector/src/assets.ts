import { fileURLToPath } from 'node:url';

/** One static file of the inspector: its URL below the page and the shipped file. */
export interface InspectorAsset {
  readonly urlPath: string;
  readonly filePath: string;
  readonly contentType: string;
}

// Resolved from the package root, so the same code finds the files from `src/` (tests) and `dist/` (npm).
function shipped(relative: string): string {
  return fileURLToPath(new URL(`../${relative}`, import.meta.url));
}

/** The stylesheet and the icon: the only static files (the pages are rendered on the server, no script). */
export const inspectorAssets: readonly InspectorAsset[] = Object.freeze([
  Object.freeze({
    urlPath: '/inspector.css',
    filePath: shipped('assets/inspector.css'),
    contentType: 'text/css; charset=utf-8',
  }),
  Object.freeze({
    urlPath: '/favicon.svg',
    filePath: shipped('assets/favicon.svg'),
    contentType: 'image/svg+xml',
  }),
]);
