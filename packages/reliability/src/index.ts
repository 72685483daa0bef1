/**
 * `@engram/reliability` (private): the crash-safety, concurrent-process and hostile-input suites live in
 * `*.native.test.ts` next to their helpers (`harness.ts`, `fault-driver.ts`, the child scripts,
 * `hostile-arbitraries.ts`); the package exports nothing.
 */
export {};
