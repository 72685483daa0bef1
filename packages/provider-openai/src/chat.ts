import { z } from 'zod';
import { malformed, malformedFrom, postJson } from './http.js';
import {
  configErrorFrom,
  createTransport,
  type OpenAICompatibleHttpConfig,
  once,
  type Transport,
} from './transport.js';

/** How structured output is requested: a JSON Schema (`json_schema`) or plain JSON mode for older servers. */
export type OpenAICompatibleJsonMode = 'json_schema' | 'json_object';

/** Which request field carries the output-token limit. */
export type OpenAICompatibleMaxTokensField = 'max_tokens' | 'max_completion_tokens';

/** Construction settings of {@link createOpenAICompatibleChatModel}. */
export interface OpenAICompatibleChatModelConfig extends OpenAICompatibleHttpConfig {
  /** The chat model, e.g. `gpt-4o-mini`, `qwen2.5:7b-instruct` or a vLLM served model name. */
  readonly model: string;
  /** The model port id (default `openai-compatible:<model>`). */
  readonly id?: string;
  /** Sampling temperature sent with every request, 0..2 (omitted by default). */
  readonly temperature?: number;
  /**
   * `json_schema` (default) sends `response_format: { type: 'json_schema', json_schema: { name, schema, strict } }`;
   * `json_object` sends `{ type: 'json_object' }` and puts the schema into the system prompt, for servers such as
   * older Ollama releases that do not support JSON Schema output.
   */
  readonly jsonMode?: OpenAICompatibleJsonMode;
  /** The `strict` flag of `json_schema` output (default `true`). */
  readonly strictSchema?: boolean;
  /** The field that carries `maxOutputTokens` (default `max_tokens`; OpenAI's reasoning models need `max_completion_tokens`). */
  readonly maxTokensField?: OpenAICompatibleMaxTokensField;
}

/** A chat message (structurally the maintenance `ModelMessage`). */
export interface OpenAICompatibleChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** One structured-output request (structurally the maintenance model port's request). */
export interface OpenAICompatibleGenerateRequest {
  readonly messages: readonly OpenAICompatibleChatMessage[];
  readonly jsonSchema: { readonly name: string; readonly schema: Readonly<Record<string, unknown>> };
  readonly maxOutputTokens?: number;
  readonly signal?: AbortSignal;
}

/** The model's raw text and, when the server reports it, token usage. */
export interface OpenAICompatibleGenerateResult {
  readonly text: string;
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
}

/**
 * A model port served by an OpenAI-compatible `POST /chat/completions` endpoint with structured JSON output.
 *
 * Contract: `generate` is async; it resolves with `choices[0].message.content` (expected to be JSON, which the caller
 * still parses and validates) and the usage the server reported, or rejects with an `EngramProviderError`. An empty,
 * refused or token-truncated answer rejects with `ENGRAM_PROVIDER_MALFORMED_RESPONSE`; it never throws synchronously.
 */
export interface OpenAICompatibleChatModel {
  /** The model port id. */
  readonly id: string;
  /** Asks the model for JSON output matching `request.jsonSchema`. */
  generate(request: OpenAICompatibleGenerateRequest): Promise<OpenAICompatibleGenerateResult>;
}

const chatConfigSchema = once(() =>
  z.object({
    model: z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }),
    id: z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }).optional(),
    temperature: z
      .number({ error: 'must be a number' })
      .min(0, { error: 'must be at least 0' })
      .max(2, { error: 'must be at most 2' })
      .optional(),
    jsonMode: z
      .enum(['json_schema', 'json_object'], { error: 'must be "json_schema" or "json_object"' })
      .optional(),
    strictSchema: z.boolean({ error: 'must be a boolean' }).optional(),
    maxTokensField: z
      .enum(['max_tokens', 'max_completion_tokens'], {
        error: 'must be "max_tokens" or "max_completion_tokens"',
      })
      .optional(),
  }),
);

const chatResponseSchema = once(() =>
  z.object({
    choices: z
      .array(
        z.object({
          message: z.object({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
          }),
          finish_reason: z.string().nullish(),
        }),
      )
      .min(1),
  }),
);

const usageSchema = once(() =>
  z.object({
    usage: z.object({
      prompt_tokens: z.number().int().min(0),
      completion_tokens: z.number().int().min(0),
    }),
  }),
);

const DEFAULT_TIMEOUT_MS = 60_000;
const WHAT = 'OpenAI-compatible chat model';

/** OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$` as a schema name; anything else is replaced, never rejected. */
function schemaName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'response' : cleaned;
}

/** The system instruction used in `json_object` mode, where the server never sees the schema otherwise. */
function jsonObjectInstruction(name: string, schema: Readonly<Record<string, unknown>>): string {
  return `Answer with one JSON object only, no prose and no code fences. It must conform to this JSON Schema (${schemaName(name)}): ${JSON.stringify(schema)}`;
}

class HttpChatModel implements OpenAICompatibleChatModel {
  readonly id: string;
  readonly #transport: Transport;
  readonly #model: string;
  readonly #temperature: number | undefined;
  readonly #jsonMode: OpenAICompatibleJsonMode;
  readonly #strict: boolean;
  readonly #maxTokensField: OpenAICompatibleMaxTokensField;

  constructor(config: OpenAICompatibleChatModelConfig) {
    const parsed = chatConfigSchema().safeParse(config);
    if (!parsed.success) throw configErrorFrom(parsed.error, WHAT);
    this.#transport = createTransport(
      config,
      'chat.completions',
      'chat/completions',
      DEFAULT_TIMEOUT_MS,
      WHAT,
    );
    this.#model = parsed.data.model;
    this.#temperature = parsed.data.temperature;
    this.#jsonMode = parsed.data.jsonMode ?? 'json_schema';
    this.#strict = parsed.data.strictSchema ?? true;
    this.#maxTokensField = parsed.data.maxTokensField ?? 'max_tokens';
    this.id = parsed.data.id ?? `openai-compatible:${parsed.data.model}`;
  }

  async generate(request: OpenAICompatibleGenerateRequest): Promise<OpenAICompatibleGenerateResult> {
    const transport = this.#transport;
    const { name, schema } = request.jsonSchema;
    let messages = request.messages.map(({ role, content }) => ({ role, content }));
    let responseFormat: Record<string, unknown>;
    if (this.#jsonMode === 'json_schema') {
      responseFormat = {
        type: 'json_schema',
        json_schema: { name: schemaName(name), schema, strict: this.#strict },
      };
    } else {
      responseFormat = { type: 'json_object' };
      const instruction = jsonObjectInstruction(name, schema);
      const [first, ...rest] = messages;
      messages =
        first?.role === 'system'
          ? [{ role: 'system', content: `${first.content}\n\n${instruction}` }, ...rest]
          : [{ role: 'system', content: instruction }, ...messages];
    }
    const payload = {
      model: this.#model,
      messages,
      response_format: responseFormat,
      ...(this.#temperature === undefined ? {} : { temperature: this.#temperature }),
      ...(request.maxOutputTokens === undefined ? {} : { [this.#maxTokensField]: request.maxOutputTokens }),
    };
    const { json, attempts } = await postJson(transport, payload, request.signal);
    const parsed = chatResponseSchema().safeParse(json);
    if (!parsed.success)
      throw malformedFrom(transport, attempts, parsed.error, 'a body that is not a chat completion');
    const choice = parsed.data.choices[0]!;
    const content = choice.message.content;
    if (typeof content !== 'string' || content.trim() === '') {
      const refused = typeof choice.message.refusal === 'string' && choice.message.refusal !== '';
      throw malformed(transport, attempts, refused ? 'a refusal instead of content' : 'an empty message');
    }
    if (choice.finish_reason === 'length') {
      throw malformed(transport, attempts, 'output cut off at the token limit (finish_reason "length")');
    }
    const usage = usageSchema().safeParse(json);
    return usage.success
      ? {
          text: content,
          usage: {
            inputTokens: usage.data.usage.prompt_tokens,
            outputTokens: usage.data.usage.completion_tokens,
          },
        }
      : { text: content };
  }
}

/**
 * Creates a model port that calls `POST {baseUrl}/chat/completions` of OpenAI, Ollama, vLLM, LM Studio or any compatible server.
 *
 * Throws `ENGRAM_PROVIDER_CONFIG` synchronously on invalid settings (the message names the setting, never its value).
 */
export function createOpenAICompatibleChatModel(
  config: OpenAICompatibleChatModelConfig,
): OpenAICompatibleChatModel {
  return new HttpChatModel(config);
}
