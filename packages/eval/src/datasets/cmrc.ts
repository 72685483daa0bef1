import { z } from 'zod';
import { EngramEvalError } from '../errors.js';
import type { FixtureMemory, FixtureQuery } from '../fixture.js';
import { type DatasetFixture, type DatasetSplit, DETERMINISTIC_VECTOR_PROFILE, splitName } from './common.js';

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

/** Options of {@link cmrcToFixture}. */
export interface CmrcOptions {
  /**
   * `dev`: the questions of the first half of the paragraphs in file order (the first ⌈n / 2⌉); `test`: the
   * questions of the rest; `all` (default): every question. The corpus is every paragraph in each split.
   */
  readonly split?: DatasetSplit;
}

/**
 * Turns CMRC 2018 (SQuAD format) into a fixture: one agent, one `fact` row per paragraph `context`, one
 * query per question whose only relevant id is its own paragraph.
 */
export function cmrcToFixture(data: unknown, options: CmrcOptions = {}): DatasetFixture {
  const split = options.split ?? 'all';
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
  const paragraphCount = parsed.data.data.reduce((n, a) => n + a.paragraphs.length, 0);
  const devParagraphs = Math.ceil(paragraphCount / 2);
  let position = -1;
  for (const article of parsed.data.data) {
    for (const paragraph of article.paragraphs) {
      position += 1;
      const inSplit = split === 'all' || position < devParagraphs === (split === 'dev');
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
        if (!inSplit) continue;
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
      name: splitName('cmrc2018-dev', split),
      vectorProfile: DETERMINISTIC_VECTOR_PROFILE,
      subsets: ['questions'],
      corpus,
      queries,
    },
    stats: { rows: corpus.length, queries: queries.length, skippedQuestions: skipped },
  };
}
