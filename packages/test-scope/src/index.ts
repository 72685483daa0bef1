export type {
  CheckScopeInput,
  CheckScopeResult,
  ScopeError,
  ScopeFile,
  ScopePackage,
  ScopeRule,
  ScopeSummary,
} from './check-scope.js';
export { checkScope, isNativeSpecifier, SCOPE_RULES } from './check-scope.js';
export type { ScopeExemption, ScopeManifest, ScopeTestEntry, Tier } from './manifest.js';
export { MANIFEST_FILE, scopeManifestSchema, TIERS } from './manifest.js';
export type { ModuleReference, ModuleReferenceKind } from './module-references.js';
export { findModuleReferences } from './module-references.js';
export type { ReadRepositoryResult } from './repository.js';
export { readRepository } from './repository.js';
export { findSkipMarkers } from './skip-markers.js';
export { isTestFile, isTypeTest, owningPackage, tierFromFileName } from './test-files.js';
