import type { ModelMessage, ModelPort } from '../ports.js';

/** One scripted answer: canned text, or a function of the request (for answers that depend on ids). */
export type ScriptedAnswer =
  | string
  | ((request: {
      readonly messages: readonly ModelMessage[];
      readonly schemaName: string;
    }) => string | Promise<string>);

/** A recorded call of the scripted model. */
export interface ScriptedCall {
  readonly schemaName: string;
  readonly messages: readonly ModelMessage[];
}

/**
 * A scripted model (a test double of an external LLM service): answers by schema name from queues of canned
 * JSON, records every call, and rejects when its script for a schema runs out.
 */
export interface ScriptedModel extends ModelPort {
  readonly calls: ScriptedCall[];
  push(schemaName: string, ...answers: ScriptedAnswer[]): void;
}

/** Creates a scripted model. */
export function createScriptedModel(script: Record<string, ScriptedAnswer[]> = {}): ScriptedModel {
  const queues = new Map<string, ScriptedAnswer[]>(Object.entries(script).map(([k, v]) => [k, [...v]]));
  const calls: ScriptedCall[] = [];
  return {
    id: 'scripted-model',
    calls,
    push(schemaName, ...answers) {
      const q = queues.get(schemaName) ?? [];
      q.push(...answers);
      queues.set(schemaName, q);
    },
    async generate(request) {
      const schemaName = request.jsonSchema.name;
      calls.push({ schemaName, messages: request.messages });
      const next = queues.get(schemaName)?.shift();
      if (next === undefined) throw new Error('scripted model: no answer left');
      return {
        text: typeof next === 'string' ? next : await next({ messages: request.messages, schemaName }),
      };
    },
  };
}
