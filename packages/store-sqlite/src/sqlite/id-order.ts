/**
 * SQLite's order of two ids (BINARY: their UTF-8 bytes), for the arms that order their hits in JavaScript
 * instead of with an `ORDER BY … m.id` sorter. UTF-16 code units order the same way except that a surrogate
 * (U+D800–DFFF, part of a code point above U+FFFF) sorts after U+E000–FFFF in UTF-8: shifted here.
 */
export function compareIds(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

function utf8Rank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}
