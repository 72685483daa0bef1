import { describe, expect, it } from 'vitest';
import { createToolResultDeduper } from './dedupe.js';

const body = (tag: string): string => `${tag}: ${'lorem ipsum dolor sit amet '.repeat(4)}`;

describe('createToolResultDeduper', () => {
  it('turns the second identical result (after normalisation) into a pointer to the first', () => {
    const deduper = createToolResultDeduper({ capacity: 8 });
    expect(deduper.check(body('A'), 'session/s1#3')).toEqual({ duplicate: false, text: body('A') });
    const again = deduper.check(`  ${body('A').replaceAll(' ', '\n\t')}  `, 'session/s1#9');
    expect(again).toEqual({
      duplicate: true,
      text: '[identical to the tool result at session/s1#3; omitted]',
      firstPointer: 'session/s1#3',
    });
    expect(deduper.check(body('A'), 'session/s1#12').text).toBe(again.text);
  });

  it('passes short results through without remembering them', () => {
    const deduper = createToolResultDeduper({ capacity: 8 });
    expect(deduper.check('ok', 'p1')).toEqual({ duplicate: false, text: 'ok' });
    expect(deduper.check('ok', 'p2')).toEqual({ duplicate: false, text: 'ok' });
    expect(deduper.size).toBe(0);
  });

  it('evicts the least recently used entry past the capacity, refreshing an entry on a hit', () => {
    const deduper = createToolResultDeduper({ capacity: 2 });
    deduper.check(body('A'), 'pA');
    deduper.check(body('B'), 'pB');
    expect(deduper.check(body('A'), 'pA2').duplicate).toBe(true); // A is now the most recent
    deduper.check(body('C'), 'pC'); // evicts B
    expect(deduper.size).toBe(2);
    expect(deduper.check(body('B'), 'pB2').duplicate).toBe(false); // B was forgotten, now remembered; evicts A
    expect(deduper.check(body('C'), 'pC2').duplicate).toBe(true);
    expect(deduper.check(body('A'), 'pA3').duplicate).toBe(false);
  });

  it('never grows past its capacity', () => {
    const deduper = createToolResultDeduper({ capacity: 16 });
    for (let i = 0; i < 1000; i += 1) deduper.check(body(`row ${i}`), `p${i}`);
    expect(deduper.size).toBe(16);
    deduper.clear();
    expect(deduper.size).toBe(0);
  });

  it('rejects an invalid capacity', () => {
    expect(() => createToolResultDeduper({ capacity: 0 })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_RETRIEVAL_INVALID_CONFIG' }),
    );
    expect(() => createToolResultDeduper({ capacity: 1.5 })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_RETRIEVAL_INVALID_CONFIG' }),
    );
  });
});
