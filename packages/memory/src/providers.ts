/**
 * The OpenAI-compatible provider an environment configures (`ENGRAM_OPENAI_*`, read by
 * `@engram/provider-openai`): its embedder and chat model behind one gateway (limits, deadlines, the
 * provider diagnostics), and the embedder rule of `openEngine({ env })` — `ENGRAM_EMBEDDER` or the caller's
 * choice, else the configured embedder for a new database, else USE-lite; an existing one keeps its own.
 * `@engram/maintenance` (the gateway) loads only when a provider is configured.
 */
import type { DiagnosticsCollector } from '@engram/diagnostics';
import type { EmbedderPort, ModelPort } from '@engram/maintenance';
import {
  configFromEnv,
  createOpenAICompatibleChatModel,
  createOpenAICompatibleEmbedder,
} from '@engram/provider-openai';
import {
  BUILT_IN_PROFILES,
  chooseEmbedder,
  type EmbedderChoice,
  type EmbedderProfile,
  embedderChoiceFromEnv,
  embedderMismatch,
} from './embedder-choice.js';
import type { EmbedderRule } from './open-store.js';

/** Most concurrent provider requests in total and per key when a provider is configured. */
const PROVIDER_LIMITS = { global: 4, perKey: 2, maxQueue: 64 } as const;
/** Deadline of one provider request through the gateway. */
const PROVIDER_DEADLINE_MS = 60_000;

/** The provider an environment configures, wired through one gateway. */
export interface EnvProvider {
  /** The embedder rule for `requested` (the caller's choice, else `ENGRAM_EMBEDDER`). */
  readonly rule: EmbedderRule<EmbedderChoice>;
  /** The configured embedder's drain-side and query-side ports, or null when none is configured. */
  readonly remote: { readonly drain: EmbedderPort; readonly query: EmbedderPort } | null;
  /** The configured chat model (through the gateway), or null. */
  readonly model: ModelPort | null;
  /** The chat model's name, or null. */
  readonly modelLabel: string | null;
}

/** `@engram/maintenance`, loaded once, by the first engine that needs it. */
let maintenanceModule: Promise<typeof import('@engram/maintenance')> | null = null;

export function loadMaintenance(): Promise<typeof import('@engram/maintenance')> {
  maintenanceModule ??= import('@engram/maintenance');
  return maintenanceModule;
}

/**
 * Reads the provider environment and wires it. Throws `ENGRAM_PROVIDER_CONFIG` naming the variable (never its
 * value) when the environment is invalid, and `ENGRAM_MEMORY_INVALID_CONFIG` for an unknown `ENGRAM_EMBEDDER`.
 */
export async function providerFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  requested: EmbedderChoice | undefined,
  collector: DiagnosticsCollector,
): Promise<EnvProvider> {
  const provider = configFromEnv(env);
  const asked = requested ?? embedderChoiceFromEnv(env);
  const embedder = provider.embedder === null ? null : createOpenAICompatibleEmbedder(provider.embedder);
  const remote: EmbedderProfile | null = embedder?.profile ?? null;
  const rule: EmbedderRule<EmbedderChoice> = {
    choose: (recorded) => chooseEmbedder({ recorded, requested: asked, remote }),
    profile: (choice) =>
      choice === 'openai' && remote !== null ? remote : BUILT_IN_PROFILES[choiceOf(choice)],
    mismatch: (error, _noun, profile) => embedderMismatch(error, profile),
    // Worded for a command line's --db and --key-file, as `embedderMismatch` and `chooseEmbedder` are.
    wording: {
      noDirectory: 'cannot create the database directory',
      postgresKey:
        'a PostgreSQL database takes no encryption key: encryption at rest is the server’s (TLS with sslmode in the URL)',
    },
  };
  if (embedder === null && provider.chat === null) {
    return { rule, remote: null, model: null, modelLabel: null };
  }
  const chat = provider.chat === null ? null : createOpenAICompatibleChatModel(provider.chat);
  const gateway = (await loadMaintenance()).createProviderGateway({
    embedder,
    model: chat,
    observer: collector.providerObserver,
    limits: PROVIDER_LIMITS,
    deadlineMs: PROVIDER_DEADLINE_MS,
  });
  const model = gateway.modelFor('maintenance');
  const drain = gateway.embedderFor('drain');
  const query = gateway.embedderFor('query');
  return {
    rule,
    remote: drain === null || query === null ? null : { drain, query },
    model,
    modelLabel: model === null ? null : (provider.chat?.model ?? model.id),
  };
}

/** A built-in choice (`openai` is never one without a configured embedder: `chooseEmbedder` refuses it). */
function choiceOf(choice: EmbedderChoice): 'use' | 'deterministic' {
  return choice === 'deterministic' ? 'deterministic' : 'use';
}
