import { z } from 'zod';
import { EngramEvalError } from '../errors.js';
import type { FixtureMemory, FixtureQuery } from '../fixture.js';
import { type DatasetFixture, type DatasetSplit, DETERMINISTIC_VECTOR_PROFILE, splitName } from './common.js';

/** LoCoMo question categories as subset names (1 multi-hop … 5 adversarial). */
export const LOCOMO_SUBSETS: readonly [
  'cat1-multihop',
  'cat2-temporal',
  'cat3-open-domain',
  'cat4-single-hop',
  'cat5-adversarial',
] = ['cat1-multihop', 'cat2-temporal', 'cat3-open-domain', 'cat4-single-hop', 'cat5-adversarial'] as const;

const turnSchema = z.looseObject({
  speaker: z.string(),
  dia_id: z.string(),
  text: z.string(),
  blip_caption: z.string().optional(),
});

const sampleSchema = z.looseObject({
  sample_id: z.string().min(1),
  conversation: z.record(z.string(), z.unknown()),
  qa: z.array(
    z.looseObject({
      question: z.string(),
      evidence: z.array(z.string()),
      category: z.number().int().min(1).max(5),
    }),
  ),
});

const SESSION_KEY = /^session_(\d+)$/;
const SESSION_DATE = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) ([A-Za-z]+),? (\d{4})$/i;
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/**
 * Reads a LoCoMo session date (`1:56 pm on 8 May, 2023`) as epoch ms, taken as UTC (the data names no zone);
 * undefined for any other text.
 */
export function parseLocomoDate(raw: unknown): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const m = SESSION_DATE.exec(raw.trim());
  if (m === null) return undefined;
  const month = MONTHS.indexOf((m[5] as string).toLowerCase());
  if (month < 0) return undefined;
  const hour = (Number(m[1]) % 12) + ((m[3] as string).toLowerCase() === 'pm' ? 12 : 0);
  const time = Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
  return Number.isFinite(time) ? time : undefined;
}
const EVIDENCE_ID = /^D:?(\d+):(\d+)$/;

/**
 * Normalises one raw evidence entry into dialogue ids: split on `[;\s]+`, read `D:11:26` as `D11:26`, drop
 * leading zeros. Tokens that are not of the form `D<session>:<turn>` are dropped.
 */
export function parseLocomoEvidence(raw: string): string[] {
  const ids: string[] = [];
  for (const token of raw.split(/[;\s]+/)) {
    const match = EVIDENCE_ID.exec(token);
    if (match === null) continue;
    ids.push(`D${Number.parseInt(match[1] as string, 10)}:${Number.parseInt(match[2] as string, 10)}`);
  }
  return ids;
}

/** Options of {@link locomoToFixture}. */
export interface LocomoOptions {
  /** `dev` = the first five conversations in file order, `test` = the rest, `all` (default) = every one. */
  readonly split?: DatasetSplit;
  /** `turn` (default): one row per turn; `session`: one row per session, its turns joined line by line. */
  readonly granularity?: 'turn' | 'session';
}

/** Conversations of the `dev` split (the first ones in file order); the others are `test`. */
export const LOCOMO_DEV_CONVERSATIONS = 5;

/**
 * Turns LoCoMo (`locomo10.json`) into a fixture: one agent per conversation (`sample_id`), one `event` row
 * per turn keyed `sample_id/dia_id` with content `speaker: text` (plus the image caption when present),
 * one query per question with its repaired evidence ids; evidence ids outside the conversation are
 * dropped and questions left without any are skipped (counted in `stats`). Subsets are the categories.
 * With `granularity: 'session'` a row is a whole session (`sample_id/session_N`, its turns' contents joined
 * by newlines) and a question's relevant rows are the sessions holding its evidence turns.
 *
 * Conversation structure: every row carries its session (`session_N`) and the session's date as `createdAt`
 * (`session_N_date_time`, read as UTC); a turn row also its position in the session (`seq`, 1-based, in file
 * order). Each question's `referenceTime` is the conversation's last session date.
 */
export function locomoToFixture(data: unknown, options: LocomoOptions = {}): DatasetFixture {
  const split = options.split ?? 'all';
  const bySession = options.granularity === 'session';
  const parsed = z.array(sampleSchema).safeParse(data);
  if (!parsed.success) {
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_DATASET',
      'LoCoMo: the file does not have the expected shape.',
      {
        issues: parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.')}: ${i.message}`),
      },
    );
  }
  const corpus: FixtureMemory[] = [];
  const queries: FixtureQuery[] = [];
  let repairedEvidence = 0;
  let droppedEvidence = 0;
  let skippedQuestions = 0;
  let duplicateTurns = 0;

  const samples = parsed.data.filter((_, index) =>
    split === 'all'
      ? true
      : split === 'dev'
        ? index < LOCOMO_DEV_CONVERSATIONS
        : index >= LOCOMO_DEV_CONVERSATIONS,
  );
  for (const sample of samples) {
    const agentId = sample.sample_id;
    const turnIds = new Set<string>();
    // Turn id → the row holding it (the turn itself, or its session).
    const rowOf = new Map<string, string>();
    const sessions = Object.keys(sample.conversation)
      .map((key) => ({ key, match: SESSION_KEY.exec(key) }))
      .filter((s): s is { key: string; match: RegExpExecArray } => s.match !== null)
      .sort((a, b) => Number(a.match[1]) - Number(b.match[1]));
    // Questions are asked after the conversation: their reference time is its last session's date.
    let referenceTime: number | undefined;
    for (const { key, match } of sessions) {
      const lines: string[] = [];
      const sessionId = `session_${Number(match[1])}`;
      const createdAt = parseLocomoDate(sample.conversation[`${key}_date_time`]);
      if (createdAt !== undefined) referenceTime = Math.max(referenceTime ?? createdAt, createdAt);
      const when = createdAt === undefined ? {} : { createdAt };
      let seq = 0;
      const turns = z.array(turnSchema).safeParse(sample.conversation[key]);
      if (!turns.success) {
        throw new EngramEvalError(
          'ENGRAM_EVAL_INVALID_DATASET',
          `LoCoMo: ${agentId}.${key} is not a list of turns.`,
        );
      }
      for (const turn of turns.data) {
        if (turnIds.has(turn.dia_id)) {
          duplicateTurns += 1;
          continue;
        }
        turnIds.add(turn.dia_id);
        const caption = turn.blip_caption?.trim();
        const content = `${turn.speaker}: ${turn.text}${caption ? ` [image: ${caption}]` : ''}`;
        if (bySession) {
          lines.push(content);
          rowOf.set(turn.dia_id, `${agentId}/session_${Number(match[1])}`);
        } else {
          rowOf.set(turn.dia_id, `${agentId}/${turn.dia_id}`);
          seq += 1;
          corpus.push({
            id: `${agentId}/${turn.dia_id}`,
            agentId,
            kind: 'event',
            content,
            importance: 0.5,
            ...when,
            sessionId,
            seq,
          });
        }
      }
      if (bySession && lines.length > 0) {
        const id = `${agentId}/session_${Number(match[1])}`;
        corpus.push({
          id,
          agentId,
          kind: 'event',
          content: lines.join('\n'),
          importance: 0.5,
          ...when,
          sessionId,
        });
      }
    }

    sample.qa.forEach((qa, index) => {
      const relevant: string[] = [];
      for (const raw of qa.evidence) {
        const ids = parseLocomoEvidence(raw);
        if (ids.length !== 1 || ids[0] !== raw) repairedEvidence += 1;
        for (const id of ids) {
          if (!turnIds.has(id)) {
            droppedEvidence += 1;
            continue;
          }
          const key = rowOf.get(id) as string;
          if (!relevant.includes(key)) relevant.push(key);
        }
      }
      if (relevant.length === 0) {
        skippedQuestions += 1;
        return;
      }
      queries.push({
        id: `${agentId}/q${index + 1}`,
        agentId,
        text: qa.question,
        subsets: [LOCOMO_SUBSETS[qa.category - 1] as string],
        relevantIds: relevant,
        ...(referenceTime === undefined ? {} : { referenceTime }),
      });
    });
  }

  return {
    fixture: {
      version: 1,
      name: splitName(bySession ? 'locomo10-sessions' : 'locomo10', split),
      vectorProfile: DETERMINISTIC_VECTOR_PROFILE,
      subsets: LOCOMO_SUBSETS,
      corpus,
      queries,
    },
    stats: {
      agents: samples.length,
      rows: corpus.length,
      queries: queries.length,
      repairedEvidence,
      droppedEvidence,
      skippedQuestions,
      duplicateTurns,
    },
  };
}
