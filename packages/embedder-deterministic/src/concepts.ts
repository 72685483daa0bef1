/** One synonym group of the versioned concept table: every term in `terms` adds the feature `c:<concept>`. */
export interface ConceptGroup {
  /** Stable concept name; part of the feature string, so renaming it changes vectors. */
  readonly concept: string;
  /** Lower-case, NFKC-normalised terms that belong to the concept. */
  readonly terms: readonly string[];
}

/**
 * The synonym table of `deterministic-lexicon-v1`.
 *
 * Frozen: any change to it changes vectors, so it requires a new table constant and a new profile id.
 */
export const CONCEPT_GROUPS_V1: readonly ConceptGroup[] = Object.freeze([
  group('outage', ['outage', 'outages', 'incident', 'incidents', 'downtime', 'unavailable']),
  group('auth', [
    'auth',
    'login',
    'logins',
    'logon',
    'signin',
    'sign-in',
    'authentication',
    'authenticate',
    'authn',
    'sso',
  ]),
  group('latency', ['latency', 'latencies', 'slowness', 'slow', 'delay', 'delays', 'lag', 'laggy']),
  group('deploy', [
    'deploy',
    'deploys',
    'deployed',
    'deployment',
    'deployments',
    'release',
    'releases',
    'rollout',
    'rollouts',
  ]),
  group('cache', ['cache', 'caches', 'cached', 'caching', 'memoization', 'memoize', 'redis']),
  group('backup', ['backup', 'backups', 'snapshot', 'snapshots', 'restore', 'restores']),
  group('error', ['error', 'errors', 'exception', 'exceptions', 'failure', 'failures', 'crash', 'crashes']),
  group('database', ['database', 'databases', 'db', 'postgres', 'postgresql', 'sqlite', 'mysql']),
  group('test', ['test', 'tests', 'testing', 'spec', 'specs']),
  group('config', ['config', 'configs', 'configuration', 'settings', 'setting']),
]);

function group(concept: string, terms: readonly string[]): ConceptGroup {
  return Object.freeze({ concept, terms: Object.freeze([...terms]) });
}

/** Term → concept lookup built once from the table (each term belongs to one group only). */
export function buildConceptIndex(groups: readonly ConceptGroup[]): ReadonlyMap<string, string> {
  const index = new Map<string, string>();
  for (const g of groups) {
    for (const term of g.terms) {
      if (!index.has(term)) index.set(term, g.concept);
    }
  }
  return index;
}
