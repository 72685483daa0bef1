import { describe, expect, it } from 'vitest';
import { validateFixture } from '../fixture.js';
import { cmrcToFixture } from './cmrc.js';
import { isDatasetSplit, splitName } from './common.js';
import { LOCOMO_DEV_CONVERSATIONS, locomoToFixture } from './locomo.js';
import { LOCOMO_LONG_AGENT, locomoLongToFixture } from './locomo-long.js';
import { scifactToFixture } from './scifact.js';

/** Seven one-session conversations (plus a second session in the first), each with one question. */
const locomo = Array.from({ length: 7 }, (_, c) => ({
  sample_id: `conv-${c + 1}`,
  conversation: {
    session_1: [
      { speaker: 'Ann', dia_id: 'D1:1', text: `I moved to city ${c}.` },
      { speaker: 'Bob', dia_id: 'D1:2', text: 'Nice!', blip_caption: 'a skyline' },
    ],
    ...(c === 0 ? { session_2: [{ speaker: 'Ann', dia_id: 'D2:1', text: 'The flat has a balcony.' }] } : {}),
  },
  qa: [
    {
      question: `Where did Ann move (${c})?`,
      evidence: c === 0 ? ['D1:1', 'D2:1', 'D1:2'] : ['D1:1'],
      category: 4,
    },
  ],
}));

describe('dataset splits', () => {
  it('knows dev, test and all, and suffixes the fixture name of dev and test', () => {
    expect(['dev', 'test', 'all', 'train'].map(isDatasetSplit)).toEqual([true, true, true, false]);
    expect([splitName('x', 'dev'), splitName('x', 'test'), splitName('x', 'all')]).toEqual([
      'x-dev',
      'x-test',
      'x',
    ]);
  });

  it('LoCoMo: dev is the first five conversations in file order, test the rest, rows and questions alike', () => {
    expect(LOCOMO_DEV_CONVERSATIONS).toBe(5);
    const dev = locomoToFixture(locomo, { split: 'dev' }).fixture;
    const test = locomoToFixture(locomo, { split: 'test' }).fixture;
    const all = locomoToFixture(locomo).fixture;
    const agents = (f: typeof dev): string[] => [...new Set(f.corpus.map((r) => r.agentId))];
    expect(agents(dev)).toEqual(['conv-1', 'conv-2', 'conv-3', 'conv-4', 'conv-5']);
    expect(agents(test)).toEqual(['conv-6', 'conv-7']);
    expect(test.queries.map((q) => q.agentId)).toEqual(['conv-6', 'conv-7']);
    expect(dev.queries.length + test.queries.length).toBe(all.queries.length);
    expect([dev.name, test.name, all.name]).toEqual(['locomo10-dev', 'locomo10-test', 'locomo10']);
    for (const f of [dev, test]) expect(validateFixture(f).ok).toBe(true);
  });

  it('SciFact: dev = the train claims, test = all = the validation claims; without a train file, id parity', () => {
    const corpusCsv = ['doc_id,title,abstract,structured', "1,A,['a'],False", "2,B,['b'],False"].join('\n');
    const claims = (rows: string[]): string =>
      ['id,claim,evidence_doc_id,evidence_label,evidence_sentences,cited_doc_ids', ...rows].join('\n');
    const claimsCsv = claims(['10,Ten.,,,[],[1]', '11,Eleven.,,,[],[2]', '12,Twelve.,,,[],[1]']);
    const trainClaimsCsv = claims(['3,Three.,,,[],[2]']);
    const ids = (f: ReturnType<typeof scifactToFixture>): string[] => f.fixture.queries.map((q) => q.id);
    const files = { corpusCsv, claimsCsv, trainClaimsCsv };
    expect(ids(scifactToFixture(files, { split: 'dev' }))).toEqual(['claim-3']);
    expect(ids(scifactToFixture(files, { split: 'test' }))).toEqual(['claim-10', 'claim-11', 'claim-12']);
    expect(ids(scifactToFixture(files))).toEqual(['claim-10', 'claim-11', 'claim-12']);
    expect(scifactToFixture(files, { split: 'dev' }).fixture.corpus).toHaveLength(2);
    expect(scifactToFixture(files, { split: 'dev' }).fixture.name).toBe('scifact-dev');
    const noTrain = { corpusCsv, claimsCsv };
    expect(ids(scifactToFixture(noTrain, { split: 'dev' }))).toEqual(['claim-10', 'claim-12']);
    expect(ids(scifactToFixture(noTrain, { split: 'test' }))).toEqual(['claim-11']);
  });

  it('CMRC: dev = the questions of the first ⌈n / 2⌉ paragraphs in file order, test the rest, same corpus', () => {
    const paragraph = (p: number) => ({
      id: `P${p}`,
      context: `第${p}段的内容。`,
      qas: [
        { id: `P${p}_Q0`, question: `第${p}段？` },
        { id: `P${p}_Q1`, question: `第${p}段说了什么？` },
      ],
    });
    const data = { data: [{ paragraphs: [paragraph(0), paragraph(1)] }, { paragraphs: [paragraph(2)] }] };
    const dev = cmrcToFixture(data, { split: 'dev' }).fixture;
    const test = cmrcToFixture(data, { split: 'test' }).fixture;
    expect(dev.queries.map((q) => q.id)).toEqual(['P0_Q0', 'P0_Q1', 'P1_Q0', 'P1_Q1']);
    expect(test.queries.map((q) => q.id)).toEqual(['P2_Q0', 'P2_Q1']);
    expect(dev.corpus.map((r) => r.id)).toEqual(['P0', 'P1', 'P2']);
    expect(test.corpus).toEqual(dev.corpus);
    expect(test.name).toBe('cmrc2018-dev-test');
  });
});

describe('locomo-sessions', () => {
  it('makes one row per session, its turns as lines, relevant = the sessions holding the evidence turns', () => {
    const { fixture, stats } = locomoToFixture(locomo, { granularity: 'session', split: 'dev' });
    expect(fixture.name).toBe('locomo10-sessions-dev');
    expect(fixture.corpus.filter((r) => r.agentId === 'conv-1').map((r) => [r.id, r.content])).toEqual([
      ['conv-1/session_1', 'Ann: I moved to city 0.\nBob: Nice! [image: a skyline]'],
      ['conv-1/session_2', 'Ann: The flat has a balcony.'],
    ]);
    expect(fixture.queries[0]?.relevantIds).toEqual(['conv-1/session_1', 'conv-1/session_2']);
    expect(fixture.queries[1]?.relevantIds).toEqual(['conv-2/session_1']);
    expect(stats).toMatchObject({ agents: 5, rows: 6, queries: 5 });
    expect(validateFixture(fixture).ok).toBe(true);
  });
});

describe('locomo-long', () => {
  it('joins five sessions per memory in one agent, keeps the corpus whole and splits the questions', () => {
    const dev = locomoLongToFixture(locomo, { split: 'dev' });
    const test = locomoLongToFixture(locomo, { split: 'test' });
    expect(dev.fixture.name).toBe('locomo10-long-dev');
    expect(dev.fixture.corpus.map((r) => r.agentId)).toEqual(dev.fixture.corpus.map(() => LOCOMO_LONG_AGENT));
    expect(dev.fixture.corpus.find((r) => r.id === 'conv-1/sessions_1-5')?.content).toBe(
      'Ann: I moved to city 0.\nBob: Nice! [image: a skyline]\n\nAnn: The flat has a balcony.',
    );
    expect(test.fixture.corpus).toEqual(dev.fixture.corpus);
    expect(dev.fixture.queries[0]?.relevantIds).toEqual(['conv-1/sessions_1-5']);
    expect(dev.fixture.queries.every((q) => q.agentId === LOCOMO_LONG_AGENT)).toBe(true);
    expect(dev.fixture.queries.length + test.fixture.queries.length).toBe(
      locomoLongToFixture(locomo).fixture.queries.length,
    );
    expect(validateFixture(dev.fixture).ok).toBe(true);
  });
});
