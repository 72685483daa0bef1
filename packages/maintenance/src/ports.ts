/**
 * Ports of background memory work that external services implement: an embedder and a model.
 * Both are async; adapters (the deterministic embedder, an OpenAI-compatible HTTP client, the gateway)
 * implement them structurally. Callers may abort through `signal`; an adapter rejects on failure and never
 * resolves with partial output.
 */

/**
 * Async embedder port: one vector per text, same order.
 *
 * Contract: called by the embedding drain (and the gateway that wraps it); resolves with exactly
 * `texts.length` vectors of `profile.dimensions` finite numbers, or rejects. The drain still validates every
 * vector it receives and treats a malformed one as an error of that row.
 */
export interface EmbedderPort {
  readonly profile: { readonly id: string; readonly dimensions: number };
  embed(texts: readonly string[], options?: { readonly signal?: AbortSignal }): Promise<Float32Array[]>;
}

/** A chat message for the model port. */
export interface ModelMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/**
 * Async model port with structured JSON output: the adapter asks the model for JSON matching `jsonSchema`; the caller validates `text` with zod.
 *
 * Contract: called by extraction and the heavy maintenance phase; resolves with the model's raw text (expected
 * to be JSON) or rejects. Callers never trust `text`: it is parsed and zod-validated before anything is applied.
 */
export interface ModelPort {
  readonly id: string;
  generate(request: {
    readonly messages: readonly ModelMessage[];
    readonly jsonSchema: { readonly name: string; readonly schema: Readonly<Record<string, unknown>> };
    readonly maxOutputTokens?: number;
    readonly signal?: AbortSignal;
  }): Promise<{
    readonly text: string;
    readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  }>;
}
