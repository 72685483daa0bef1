import { engramErrorCode } from '@engram/contracts/errors';
import type { z } from 'zod';
import { checkModelOutput, jsonSchemaOf, type ModelOutputFailure } from './model-output.js';
import type { ModelMessage, ModelPort } from './ports.js';

/** The settled result of one structured model call. */
export type ModelCallResult<T> =
  | { readonly ok: true; readonly value: T }
  | ({ readonly ok: false; readonly reason: 'invalid' } & ModelOutputFailure)
  | { readonly ok: false; readonly reason: 'aborted' }
  | { readonly ok: false; readonly reason: 'error'; readonly code: string };

/** Asks the model for JSON matching `schema`, then parses and validates it; never throws. */
export async function callModel<T>(
  model: ModelPort,
  schema: z.ZodType<T>,
  name: string,
  messages: readonly ModelMessage[],
  options: { readonly signal?: AbortSignal | undefined; readonly maxOutputTokens?: number | undefined } = {},
): Promise<ModelCallResult<T>> {
  let text: string;
  try {
    const answer = await model.generate({
      messages,
      jsonSchema: { name, schema: jsonSchemaOf(schema) },
      ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    text = answer.text;
  } catch (error) {
    if (options.signal?.aborted === true) return { ok: false, reason: 'aborted' };
    return { ok: false, reason: 'error', code: engramErrorCode(error) ?? 'UNKNOWN' };
  }
  if (options.signal?.aborted === true) return { ok: false, reason: 'aborted' };
  if (typeof text !== 'string') return { ok: false, reason: 'invalid', path: '', issue: 'not_text' };
  const checked = checkModelOutput(schema, text);
  return checked.ok
    ? { ok: true, value: checked.value }
    : { ok: false, reason: 'invalid', path: checked.path, issue: checked.issue };
}
