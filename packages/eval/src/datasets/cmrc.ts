import { z } from 'zod';
import { EngramEvalError } from '../errors.js';
import type { FixtureMemory, FixtureQuery } from '../fixture.js';
import { type DatasetFixture, DETERMINISTIC_VECTOR_PROFILE } from './common.js';

/** The agent every CMRC row belongs to. */
export const CMRC_AGENT = 'cmrc';

const squadSchema = z.looseObject({
  data: z.array(
    z.looseObject({
      paragraphs: z.array(
        z.looseObject({
          id: z.string().min(1),
          context: z.string(),
          qas: z.array(z.looseObject({ id: z.string().min(1), question: z.string() })),
        }),
      ),
    }),
  ),
});

/**
 * Turns CMRC 2018 (SQuAD format) into a fixture: one agent, one `fact` row per paragraph `context`, one
 * query per question whose only relevant id is its own paragraph.
 */
export function cmrcToFixture(data: unknown): DatasetFixture {
  const parsed = squadSchema.safeParse(data);
  if (!parsed.success) {
    throw new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', 'CMRC: the file is not in SQuAD format.', {
      issues: parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.')}: ${i.message}`),
    });
  }
  const corpus: FixtureMemory[] = [];
  const queries: FixtureQuery[] = [];
  const seenParagraphs = new Set<string>();
  const seenQuestions = new Set<string>();
  let skipped = 0;
  for (const article of parsed.data.data) {
    for (const paragraph of article.paragraphs) {
      if (seenParagraphs.has(paragraph.id) || paragraph.context.trim() === '') {
        skipped += paragraph.qas.length;
        continue;
      }
      seenParagraphs.add(paragraph.id);
      corpus.push({
        id: paragraph.id,
        agentId: CMRC_AGENT,
        kind: 'fact',
        content: paragraph.context,
        importance: 0.5,
      });
      for (const qa of paragraph.qas) {
        if (seenQuestions.has(qa.id) || qa.question.trim() === '') {
          skipped += 1;
          continue;
        }
        seenQuestions.add(qa.id);
        queries.push({
          id: qa.id,
          agentId: CMRC_AGENT,
          text: qa.question,
          subsets: ['questions'],
          relevantIds: [paragraph.id],
        });
      }
    }
  }
  return {
    fixture: {
      version: 1,
      name: 'cmrc2018-dev',
      vectorProfile: DETERMINISTIC_VECTOR_PROFILE,
      subsets: ['questions'],
      corpus,
      queries,
    },
    stats: { rows: corpus.length, queries: queries.length, skippedQuestions: skipped },
  };
}
