import { estimateTokens, tokenUnits } from '@engram/contracts';
import type { MemoryRecord } from '@engram/store';
import { describe, expect, it } from 'vitest';
import { isoInstant, memoryPointer, renderCoreBlock } from './injection.js';
import { memoryRecord } from './memory-record.fixture.js';

function fact(
  id: string,
  content: string,
  createdAt: number,
  importance = 0.5,
  extra: Partial<MemoryRecord> = {},
): MemoryRecord {
  return memoryRecord({ id, content, importance, createdAt, updatedAt: createdAt, ...extra });
}

const FACTS = [
  fact('f3', 'Deploys go through scripts/deploy.sh', 3000, 0.9),
  fact('f1', 'The user prefers English\nand short answers', 1000, 0.7),
  fact('f2', '项目使用 pnpm 安装依赖', 2000, 0.5),
  fact('f0', 'same time, lower id', 2000, 0.2),
];

describe('renderCoreBlock', () => {
  it('renders active facts oldest first (createdAt, then id), one line each — exact bytes', () => {
    expect(renderCoreBlock(FACTS, { budgetTokens: 1000 })).toBe(
      '# Core memory (facts)\n' +
        '- The user prefers English and short answers\n' +
        '- same time, lower id\n' +
        '- 项目使用 pnpm 安装依赖\n' +
        '- Deploys go through scripts/deploy.sh\n',
    );
  });

  it('depends on the facts only: input order, other kinds and inactive rows change nothing', () => {
    const base = renderCoreBlock(FACTS, { budgetTokens: 1000 });
    const noisy = [
      fact('e1', 'an event', 1500, 1, { kind: 'event' }),
      ...[...FACTS].reverse(),
      fact('old', 'archived fact', 500, 1, { lifecycle: 'archived' }),
      fact('sup', 'superseded fact', 600, 1, { lifecycle: 'superseded' }),
    ];
    expect(renderCoreBlock(noisy, { budgetTokens: 1000 })).toBe(base);
  });

  it('changes exactly the line of a fact that changed', () => {
    const base = renderCoreBlock(FACTS, { budgetTokens: 1000 }).split('\n');
    const edited = FACTS.map((f) =>
      f.id === 'f2' ? { ...f, content: '项目使用 npm 安装依赖', revision: 2 } : f,
    );
    const after = renderCoreBlock(edited, { budgetTokens: 1000 }).split('\n');
    expect(after.filter((line, i) => line !== base[i])).toEqual(['- 项目使用 npm 安装依赖']);
  });

  it('fills the budget by importance (skipping what does not fit) and says how many were left out', () => {
    // f3 (0.9) fits; f1 (0.7) and the CJK fact f2 (0.5) do not; the short f0 (0.2) still does.
    const block = renderCoreBlock(FACTS, { budgetTokens: 30 });
    expect(block).toBe(
      '# Core memory (facts)\n' +
        '- same time, lower id\n' +
        '- Deploys go through scripts/deploy.sh\n' +
        '- (2 more facts not shown)\n',
    );
    expect(estimateTokens(block)).toBeLessThanOrEqual(30);
    const wider = renderCoreBlock(FACTS, { budgetTokens: 40 });
    expect(wider).toBe(
      '# Core memory (facts)\n' +
        '- The user prefers English and short answers\n' +
        '- same time, lower id\n' +
        '- Deploys go through scripts/deploy.sh\n' +
        '- (1 more fact not shown)\n',
    );
    expect(estimateTokens(wider)).toBe(39); // 38.5 units
    expect(renderCoreBlock(FACTS, { budgetTokens: 3 })).toBe('');
    expect(renderCoreBlock([], { budgetTokens: 1000 })).toBe('');
  });
});

describe('estimateTokens', () => {
  it('counts CJK characters × 1.5 and other code points ÷ 4, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('数据库')).toBe(5); // 4.5
    expect(estimateTokens('数据库abc')).toBe(6); // 4.5 + 0.75
    expect(estimateTokens('こんにちは')).toBe(8); // 7.5
    expect(estimateTokens('한국어')).toBe(5);
    expect(estimateTokens('。，')).toBe(3); // CJK punctuation and a full-width comma
    expect(estimateTokens('😀😀😀😀')).toBe(1); // code points, not UTF-16 units
    expect(tokenUnits('ab数')).toBe(2);
  });
});

describe('memoryPointer', () => {
  it('points at an archived seq range', () => {
    expect(memoryPointer({ sessionId: 's-1', seqFrom: 12, seqTo: 19 })).toBe('session/s-1#12-19');
    expect(memoryPointer({ sessionId: 's-1', seqFrom: 4, seqTo: null })).toBe('session/s-1#4-4');
    expect(memoryPointer({ sessionId: null, seqFrom: null, seqTo: null })).toBeNull();
  });
});

describe('a stored instant no Date holds', () => {
  it('renders as an invalid date in recall and tool text, never throws (a restored or hand-written row)', async () => {
    const { renderSearch, searchHits } = await import('./tools/render.js');
    expect(isoInstant(9e15)).toBe('invalid date');
    expect(isoInstant(Number.NaN)).toBe('invalid date');
    expect(isoInstant(86_400_000)).toBe('1970-01-02T00:00:00.000Z');
    const bad = fact('bad', 'the harbour is calm', 9e15);
    expect(renderCoreBlock([bad], { budgetTokens: 1000 })).toBe(
      '# Core memory (facts)\n- the harbour is calm\n',
    );
    const result = { record: bad, score: 1, explanation: { final: 1 } } as unknown as Parameters<
      typeof renderSearch
    >[0][number];
    expect(renderSearch([result], 2000, '')).toContain('[fact invalid date id:bad]');
    expect(searchHits([result], 2000)[0]?.createdAt).toBe('invalid date');
  });
});
