/**
 * Input validation of the store, run before anything is written. Every failure is an
 * `ENGRAM_STORE_INVALID_INPUT` (or a vector code) whose message names the field, never its value.
 *
 * Slightly over 400 lines on purpose: every input rule of the store (ids, content, tags, vectors, metadata,
 * events, skills) sits in one file, so that one message style and one serialisation of JSON values serve all.
 */

import {
  EVENT_TYPES,
  type EventType,
  LIFECYCLES,
  type Lifecycle,
  MEMORY_KINDS,
  type MemoryKind,
} from '@engram/contracts/enums';
import {
  type AgentIdFormProblem,
  checkAgentId,
  checkAgentIdForm,
  checkMemoryId,
  checkTag,
  hasControlCharacter,
  type IdentifierProblem,
  isWellFormedText,
  MAX_AGENT_ID_LENGTH,
  MAX_MEMORY_ID_LENGTH,
  MAX_TAG_VALUE_LENGTH,
  MAX_TAGS,
  MAX_TIMESTAMP_MS,
  type TagProblem,
} from '@engram/contracts/rules';
import { EngramStoreError, invalidInput } from './errors.js';
import type { EventInput, MemoryPatch, NewMemory, SkillInput } from './types.js';

/** Default maximum content length, in UTF-16 code units. */
export const DEFAULT_MAX_CONTENT_LENGTH = 65_536;
/** Longest serialised metadata of a memory (UTF-16 units of its JSON). */
export const MAX_METADATA_CHARS = 16_384;
/** A skill name: letter or digit, then up to 63 of letters, digits, `_`, `-`. */
export const SKILL_NAME_PATTERN: RegExp = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

const KIND_SET: ReadonlySet<string> = new Set<string>(MEMORY_KINDS);
const LIFECYCLE_SET: ReadonlySet<string> = new Set<string>(LIFECYCLES);
const EVENT_TYPE_SET: ReadonlySet<string> = new Set<string>(EVENT_TYPES);

/** Limits applied by the validators. */
export interface ValidationLimits {
  readonly maxContentLength: number;
}

function identifierMessage(problem: IdentifierProblem, field: string, maxLength: number): string {
  switch (problem) {
    case 'notString':
    case 'blank':
      return `${field} must be a non-empty string`;
    case 'tooLong':
      return `${field} is longer than ${maxLength}`;
    case 'controlCharacter':
      return `${field} contains control characters`;
    case 'loneSurrogate':
      return `${field} contains a lone surrogate`;
  }
}

function formMessage(problem: AgentIdFormProblem, field: string): string {
  switch (problem) {
    case 'surroundingWhitespace':
      return `${field} has leading or trailing whitespace`;
    case 'notNormalized':
      return `${field} is not in Unicode normalization form NFC`;
  }
}

/** The last id {@link validateAgentId} passed (a pure check of the string: the same string passes again). */
let lastValidAgentId: string | undefined;

/**
 * Checks an agent id (or session id) with the contracts' rules: non-blank, at most 256 code units, no controls,
 * and in normal form (NFC, no surrounding whitespace). An id out of normal form is refused, never normalised,
 * so a look-alike spelling can never silently address a second agent.
 */
export function validateAgentId(value: unknown, field = 'agentId'): string {
  // A batch names the same agent (and session) row after row: the last id that passed passes again.
  if (lastValidAgentId !== undefined && value === lastValidAgentId) return lastValidAgentId;
  const problem = checkAgentId(value);
  if (problem !== null) throw invalidInput(identifierMessage(problem, field, MAX_AGENT_ID_LENGTH));
  const form = checkAgentIdForm(value);
  if (form !== null) throw invalidInput(formMessage(form, field));
  lastValidAgentId = value as string;
  return lastValidAgentId;
}

/** Checks a memory id with the contracts' rule: non-blank, at most 128 code units, no controls. */
export function validateId(value: unknown, field = 'id'): string {
  const problem = checkMemoryId(value);
  if (problem !== null) throw invalidInput(identifierMessage(problem, field, MAX_MEMORY_ID_LENGTH));
  return value as string;
}

/** Checks a memory kind. */
export function validateKind(value: unknown, field = 'kind'): MemoryKind {
  if (typeof value !== 'string' || !KIND_SET.has(value)) throw invalidInput(`${field} is not a memory kind`);
  return value as MemoryKind;
}

/** Checks a lifecycle state. */
export function validateLifecycle(value: unknown, field = 'lifecycle'): Lifecycle {
  if (typeof value !== 'string' || !LIFECYCLE_SET.has(value))
    throw invalidInput(`${field} is not a lifecycle`);
  return value as Lifecycle;
}

/** Checks a finite number in [0, 1] (importance, confidence). */
export function validateUnit(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidInput(`${field} must be a finite number`);
  if (value < 0 || value > 1) throw invalidInput(`${field} must be between 0 and 1`);
  return value;
}

/** Checks an integer ≥ `min` (seq numbers, cursors, revisions). */
export function validateInteger(
  value: unknown,
  field: string,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw invalidInput(`${field} must be an integer`);
  if (value < min) throw invalidInput(`${field} must be at least ${min}`);
  if (value > max) throw invalidInput(`${field} must be at most ${max}`);
  return value;
}

/**
 * The largest position, revision or count a store takes from a caller or a backup (2^40): far below the
 * largest safe integer, so that the positions, revisions and counts a store adds to one stay exact.
 */
export const MAX_COUNTER: number = 2 ** 40;

/** The longest maintenance lease a store grants (one day). */
export const MAX_MAINTENANCE_LEASE_MS = 86_400_000;

/** Checks the arguments of a maintenance claim: the agent, a lease of 1 ms to one day, and an owner id. */
export function validateMaintenanceClaim(
  agentId: unknown,
  leaseMs: unknown,
  owner: unknown,
  fallbackOwner: string,
): { agentId: string; leaseMs: number; owner: string } {
  const agent = validateAgentId(agentId);
  const ms = validateInteger(leaseMs, 'leaseMs', 1);
  if (ms > MAX_MAINTENANCE_LEASE_MS) throw invalidInput('leaseMs must be at most one day');
  return {
    agentId: agent,
    leaseMs: ms,
    owner: owner === undefined ? fallbackOwner : validateId(owner, 'owner'),
  };
}

/**
 * Checks a timestamp: a non-negative integer (epoch milliseconds) within JavaScript's `Date` range, so every
 * stored instant renders as a date.
 */
export function validateTimestamp(value: unknown, field: string): number {
  const t = validateInteger(value, field, 0);
  if (t > MAX_TIMESTAMP_MS) throw invalidInput(`${field} is past the latest date JavaScript represents`);
  return t;
}

/** Checks content: a string, non-blank (unless `allowEmpty`), within the length cap, without lone surrogates. */
export function validateContent(
  value: unknown,
  limits: ValidationLimits,
  field = 'content',
  allowEmpty = false,
): string {
  if (typeof value !== 'string') throw invalidInput(`${field} must be a string`);
  if (!allowEmpty && value.trim().length === 0) throw invalidInput(`${field} must not be empty`);
  if (value.length > limits.maxContentLength) {
    throw invalidInput(`${field} is longer than ${limits.maxContentLength} characters`);
  }
  if (!isWellFormedText(value)) throw invalidInput(`${field} contains a lone surrogate`);
  return value;
}

const TAG_MESSAGES: Readonly<Record<TagProblem, string>> = {
  notString: 'must be a string',
  missingPrefix: 'must have the form prefix:value',
  malformedPrefix: 'prefix is malformed',
  emptyValue: 'value is empty',
  valueTooLong: `value is longer than ${MAX_TAG_VALUE_LENGTH}`,
  controlCharacter: 'value contains control characters',
  loneSurrogate: 'value contains a lone surrogate',
};

/** Checks one tag (`prefix:value`) with the contracts' rule. */
export function validateTag(value: unknown, field = 'tag'): string {
  const problem = checkTag(value);
  if (problem !== null) throw invalidInput(`${field} ${TAG_MESSAGES[problem]}`);
  return value as string;
}

/** Checks, deduplicates and sorts tags; at most 64 distinct tags. */
export function validateTags(value: unknown, field = 'tags'): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidInput(`${field} must be an array`);
  const set = new Set<string>();
  for (const tag of value) set.add(validateTag(tag, `${field} entry`));
  if (set.size > MAX_TAGS) throw invalidInput(`${field} has more than ${MAX_TAGS} entries`);
  return [...set].sort();
}

/** Checks a vector against the store's dimensions: a Float32Array of the right length, finite, non-zero. */
export function validateVector(value: unknown, dimensions: number, field = 'vector'): Float32Array {
  if (!(value instanceof Float32Array)) {
    throw new EngramStoreError(
      'ENGRAM_STORE_VECTOR_INVALID',
      `invalid vector: ${field} must be a Float32Array`,
    );
  }
  if (value.length !== dimensions) {
    throw new EngramStoreError(
      'ENGRAM_STORE_VECTOR_DIMENSIONS',
      `invalid vector: ${field} has ${value.length} dimensions, the store expects ${dimensions}`,
    );
  }
  // The norm in float32, as the vector index computes it: components of 1e38 are finite, their squares are not.
  let norm = 0;
  for (let i = 0; i < value.length; i += 1) {
    const x = value[i] as number;
    norm = Math.fround(norm + Math.fround(x * x));
  }
  // A NaN or infinite component makes the sum NaN or infinite: only then is each component checked, for the message.
  if (norm > 0 && norm < Number.POSITIVE_INFINITY) return value;
  norm = 0;
  for (let i = 0; i < value.length; i += 1) {
    const x = value[i] as number;
    if (!Number.isFinite(x)) {
      throw new EngramStoreError(
        'ENGRAM_STORE_VECTOR_INVALID',
        `invalid vector: ${field} contains NaN or Infinity`,
      );
    }
    norm = Math.fround(norm + Math.fround(x * x));
  }
  if (norm === 0 || !Number.isFinite(norm)) {
    throw new EngramStoreError(
      'ENGRAM_STORE_VECTOR_INVALID',
      `invalid vector: ${field} has zero (or overflowing) length, cosine distance is undefined`,
    );
  }
  return value;
}

/** Checks a limit: an integer ≥ 1, clamped to `max`. */
export function validateLimit(value: unknown, field: string, max: number, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  const n = validateInteger(value, field, 1);
  return Math.min(n, max);
}

/** A new memory after validation and defaults (no vector check: that needs the store's profile). */
export interface PreparedMemory {
  readonly id: string | undefined;
  readonly agentId: string;
  readonly kind: MemoryKind;
  readonly content: string;
  readonly importance: number;
  readonly confidence: number;
  readonly tags: readonly string[];
  readonly sessionId: string | null;
  readonly seqFrom: number | null;
  readonly seqTo: number | null;
  readonly createdAt: number | undefined;
  readonly vector: Float32Array | undefined;
  readonly userId: string | null;
  /** The metadata as JSON with sorted keys. */
  readonly metadataJson: string;
  readonly validFrom: number | undefined;
}

/** Validates a `NewMemory` and applies defaults (importance 0.5, confidence 1, no tags). */
export function prepareNewMemory(
  input: NewMemory,
  limits: ValidationLimits,
  field = 'memory',
): PreparedMemory {
  if (typeof input !== 'object' || input === null) throw invalidInput(`${field} must be an object`);
  const id = input.id === undefined ? undefined : validateId(input.id, `${field}.id`);
  const agentId = validateAgentId(input.agentId, `${field}.agentId`);
  const kind = validateKind(input.kind, `${field}.kind`);
  const content = validateContent(input.content, limits, `${field}.content`);
  const importance =
    input.importance === undefined ? 0.5 : validateUnit(input.importance, `${field}.importance`);
  const confidence =
    input.confidence === undefined ? 1 : validateUnit(input.confidence, `${field}.confidence`);
  const tags = validateTags(input.tags, `${field}.tags`);
  const sessionId =
    input.sessionId === undefined ? null : validateAgentId(input.sessionId, `${field}.sessionId`);
  const seqFrom =
    input.seqFrom === undefined ? null : validateInteger(input.seqFrom, `${field}.seqFrom`, 1, MAX_COUNTER);
  const seqTo =
    input.seqTo === undefined ? null : validateInteger(input.seqTo, `${field}.seqTo`, 1, MAX_COUNTER);
  if (seqFrom !== null && seqTo !== null && seqTo < seqFrom) {
    throw invalidInput(`${field}.seqTo must not be below seqFrom`);
  }
  const createdAt =
    input.createdAt === undefined ? undefined : validateTimestamp(input.createdAt, `${field}.createdAt`);
  if (input.vector !== undefined && !(input.vector instanceof Float32Array)) {
    throw new EngramStoreError(
      'ENGRAM_STORE_VECTOR_INVALID',
      `invalid vector: ${field}.vector must be a Float32Array`,
    );
  }
  const userId = input.userId === undefined ? null : validateAgentId(input.userId, `${field}.userId`);
  const metadataJson = memoryMetadataJson(input.metadata, `${field}.metadata`);
  const validFrom =
    input.validFrom === undefined ? undefined : validateTimestamp(input.validFrom, `${field}.validFrom`);
  return {
    id,
    agentId,
    kind,
    content,
    importance,
    confidence,
    tags,
    sessionId,
    seqFrom,
    seqTo,
    createdAt,
    vector: input.vector,
    userId,
    metadataJson,
    validFrom,
  };
}

/** A patch after validation; absent fields stay unchanged. */
export interface PreparedPatch {
  readonly content?: string;
  readonly kind?: MemoryKind;
  readonly importance?: number;
  readonly confidence?: number;
  readonly tags?: readonly string[];
  readonly lifecycle?: Lifecycle;
  readonly metadataJson?: string;
}

/** Validates a `MemoryPatch`. */
export function preparePatch(patch: MemoryPatch, limits: ValidationLimits): PreparedPatch {
  if (typeof patch !== 'object' || patch === null) throw invalidInput('patch must be an object');
  const out: {
    content?: string;
    kind?: MemoryKind;
    importance?: number;
    confidence?: number;
    tags?: readonly string[];
    lifecycle?: Lifecycle;
    metadataJson?: string;
  } = {};
  if (patch.content !== undefined) out.content = validateContent(patch.content, limits, 'patch.content');
  if (patch.kind !== undefined) out.kind = validateKind(patch.kind, 'patch.kind');
  if (patch.importance !== undefined) out.importance = validateUnit(patch.importance, 'patch.importance');
  if (patch.confidence !== undefined) out.confidence = validateUnit(patch.confidence, 'patch.confidence');
  if (patch.tags !== undefined) out.tags = validateTags(patch.tags, 'patch.tags');
  if (patch.lifecycle !== undefined) out.lifecycle = validateLifecycle(patch.lifecycle, 'patch.lifecycle');
  if (patch.metadata !== undefined) out.metadataJson = memoryMetadataJson(patch.metadata, 'patch.metadata');
  return out;
}

/** A validated event, metadata serialised with sorted keys. */
export interface PreparedEvent {
  readonly seq: number;
  readonly type: EventType;
  readonly role: string;
  readonly content: string;
  readonly toolName: string | null;
  readonly metadataJson: string;
  readonly createdAt: number | undefined;
  /** The event's user, or null. */
  readonly userId: string | null;
}

function stableStringify(value: unknown, depth: number, field = 'event metadata'): string {
  if (depth > 64) throw invalidInput(`${field} is nested too deeply`);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidInput(`${field} contains a non-finite number`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value))
    return `[${value.map((v) => stableStringify(v ?? null, depth + 1, field)).join(',')}]`;
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw invalidInput(`${field} must be plain JSON`);
    const keys = Object.keys(value).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined) continue;
      parts.push(`${JSON.stringify(key)}:${stableStringify(v, depth + 1, field)}`);
    }
    return `{${parts.join(',')}}`;
  }
  throw invalidInput(`${field} must be JSON-serialisable`);
}

/** Serialises a metadata object as JSON with sorted keys (so identical metadata compares equal). */
export function stableMetadataJson(
  value: unknown,
  limits: ValidationLimits,
  field = 'event.metadata',
): string {
  if (value === undefined) return '{}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidInput(`${field} must be an object`);
  }
  const json = stableStringify(value, 0);
  if (json.length > limits.maxContentLength) throw invalidInput(`${field} is larger than the content cap`);
  if (!isWellFormedText(json)) throw invalidInput(`${field} contains a lone surrogate`);
  return json;
}

/**
 * A memory's metadata as JSON with sorted keys: a plain object of JSON values (finite numbers, no lone
 * surrogates), at most {@link MAX_METADATA_CHARS} once serialised and 16 levels deep; `{}` when omitted.
 */
export function memoryMetadataJson(value: unknown, field: string): string {
  if (value === undefined) return '{}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidInput(`${field} must be an object`);
  }
  if (depthOf(value, 0) > 16) throw invalidInput(`${field} is nested more than 16 levels deep`);
  const json = stableStringify(value, 0, field);
  if (json.length > MAX_METADATA_CHARS) {
    throw invalidInput(`${field} is larger than ${MAX_METADATA_CHARS} characters`);
  }
  if (!isWellFormedText(json)) throw invalidInput(`${field} contains a lone surrogate`);
  return json;
}

function depthOf(value: unknown, depth: number): number {
  if (depth > 16 || typeof value !== 'object' || value === null) return depth;
  let max = depth;
  for (const v of Object.values(value)) max = Math.max(max, depthOf(v, depth + 1));
  return max;
}

/** Validates one event of an append. Event content may be empty (a tool call without text) but is capped. */
export function prepareEvent(input: EventInput, limits: ValidationLimits, field = 'event'): PreparedEvent {
  if (typeof input !== 'object' || input === null) throw invalidInput(`${field} must be an object`);
  const seq = validateInteger(input.seq, `${field}.seq`, 1, MAX_COUNTER);
  if (typeof input.type !== 'string' || !EVENT_TYPE_SET.has(input.type)) {
    throw invalidInput(`${field}.type is not an event type`);
  }
  if (typeof input.role !== 'string' || input.role.trim().length === 0 || input.role.length > 64) {
    throw invalidInput(`${field}.role must be a non-empty string of at most 64 characters`);
  }
  if (hasControlCharacter(input.role)) throw invalidInput(`${field}.role contains control characters`);
  const content = validateContent(input.content, limits, `${field}.content`, true);
  let toolName: string | null = null;
  if (input.toolName !== undefined) {
    if (typeof input.toolName !== 'string' || input.toolName.length === 0 || input.toolName.length > 256) {
      throw invalidInput(`${field}.toolName must be a non-empty string of at most 256 characters`);
    }
    if (hasControlCharacter(input.toolName))
      throw invalidInput(`${field}.toolName contains control characters`);
    toolName = input.toolName;
  }
  const metadataJson = stableMetadataJson(input.metadata, limits, `${field}.metadata`);
  const createdAt =
    input.createdAt === undefined ? undefined : validateTimestamp(input.createdAt, `${field}.createdAt`);
  const userId =
    input.userId === undefined || input.userId === null
      ? null
      : validateAgentId(input.userId, `${field}.userId`);
  return {
    seq,
    type: input.type as EventType,
    role: input.role,
    content,
    toolName,
    metadataJson,
    createdAt,
    userId,
  };
}

/** Validates a skill write. */
export function prepareSkill(input: SkillInput, limits: ValidationLimits): SkillInput {
  if (typeof input !== 'object' || input === null) throw invalidInput('skill must be an object');
  const agentId = validateAgentId(input.agentId, 'skill.agentId');
  const name = validateSkillName(input.name);
  if (typeof input.description !== 'string' || input.description.length > 1024) {
    throw invalidInput('skill.description must be a string of at most 1024 characters');
  }
  if (!isWellFormedText(input.description)) throw invalidInput('skill.description contains a lone surrogate');
  const content = validateContent(input.content, limits, 'skill.content');
  return { agentId, name, description: input.description, content };
}

/** Checks a skill name against `SKILL_NAME_PATTERN`. */
export function validateSkillName(value: unknown): string {
  if (typeof value !== 'string' || !SKILL_NAME_PATTERN.test(value)) {
    throw invalidInput('skill.name must match /^[a-z0-9][a-z0-9_-]{0,63}$/i');
  }
  return value;
}
