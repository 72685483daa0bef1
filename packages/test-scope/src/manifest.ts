import { z } from 'zod';

/** The four test tiers, in the order the pipeline runs them. */
export const TIERS: readonly ['behavior', 'native', 'eval', 'perf'] = [
  'behavior',
  'native',
  'eval',
  'perf',
] as const;

/** One test tier. */
export type Tier = (typeof TIERS)[number];

/** The manifest's file name at the repository root. */
export const MANIFEST_FILE = 'memory-test-scope.json';

const repoPath = z
  .string()
  .min(1)
  .refine(
    (path) =>
      !path.startsWith('/') &&
      !path.includes('\\') &&
      path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'),
    { message: 'must be a relative POSIX path from the repository root without "." or ".." segments' },
  );

/** The zod schema of `memory-test-scope.json` (version 1). */
export const scopeManifestSchema: z.ZodType<ScopeManifest> = z.strictObject({
  version: z.literal(1),
  tests: z.array(
    z.strictObject({
      path: repoPath,
      tier: z.enum(TIERS),
      package: z.string().min(1),
    }),
  ),
  exemptions: z.array(
    z.strictObject({
      path: repoPath,
      // Emptiness is reported by the EMPTY_REASON rule, not as a schema error.
      reason: z.string(),
    }),
  ),
});

/** A test file's entry: its tier and owning package. */
export interface ScopeTestEntry {
  /** Repository-relative POSIX path. */
  readonly path: string;
  /** The tier whose run executes this file. */
  readonly tier: Tier;
  /** Name of the package whose directory holds the file. */
  readonly package: string;
}

/** A file that looks like a test but no tier runs, with the reason why. */
export interface ScopeExemption {
  /** Repository-relative POSIX path. */
  readonly path: string;
  /** Why no tier runs it; must not be empty. */
  readonly reason: string;
}

/** The parsed manifest. */
export interface ScopeManifest {
  /** Format version; only `1` exists. */
  readonly version: 1;
  /** Every test file with its tier and owner. */
  readonly tests: readonly ScopeTestEntry[];
  /** Test-looking files that are deliberately not run by a tier. */
  readonly exemptions: readonly ScopeExemption[];
}
