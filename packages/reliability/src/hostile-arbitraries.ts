/**
 * fast-check arbitraries of hostile and malformed input for the hostile-input suite: FTS5 syntax and quotes,
 * NUL and control characters, lone surrogates, combining marks, right-to-left text, emoji, 1 MB strings
 * (rare), empty and whitespace-only strings, numbers as strings, NaN/±Infinity/negative numbers, wrong-length
 * and NaN vectors, unknown kinds and tags, and invalid JSON.
 */
import fc from 'fast-check';

/** A marker planted in generated text: an error message that contains it leaked user content. */
export const LEAK_MARKER = 'ZQXJLEAKMARKER';

/** FTS5 query syntax, quotes and LIKE wildcards that must be searched literally. */
const FTS_SYNTAX = [
  'AND',
  'OR',
  'NOT',
  'NEAR',
  'NEAR(alpha bravo, 2)',
  '"',
  '""',
  '"unterminated',
  "'",
  "''",
  '*',
  'alpha*',
  '^alpha',
  '-',
  '+',
  ':',
  'content:alpha',
  'agent:',
  '{agent content}:x',
  '(',
  ')',
  '()',
  '%',
  '_',
  '\\',
  '[',
  ']',
  '\u0060',
  ';',
  '--',
  '/*',
  "'; DROP TABLE memories; --",
  'rowid',
  'MATCH',
];
const CONTROL = [
  '\u0000',
  '\u0000\u0000',
  'a\u0000b',
  '\u0001',
  '\u0007',
  '\b',
  '\t',
  '\n',
  '\r',
  '\u001b[31m',
  '\u007f',
];
const SURROGATES = ['\ud800', '\udc00', '\udfff', 'a\ud83d', '\ude00b', '\udc00\ud800'];
const COMBINING = [
  'e\u0301',
  '\u0301',
  '\u0300\u0301\u0302\u0303',
  'Z\u0351\u0352\u0353\u0354\u0355',
  '\u20dd',
  '\ufe0f',
];
const RTL = [
  'مرحبا بالعالم',
  'שלום עולם',
  '\u202eabc',
  '\u200f',
  '\u202b',
  '\u2067x\u2069',
  'ما هو المنفذ 8080',
];
const EMOJI = [
  '🔥',
  '👨\u200d👩\u200d👧\u200d👦',
  '🇨🇳',
  '🏳️\u200d🌈',
  '😀😀😀',
  '\u{1f9d1}\u{1f3fd}\u200d\u{1f4bb}',
];
const CJK = ['数据库连接池', '中', '中文', '向量索引', '日本語のテキスト', '한국어', '数'];
const WHITESPACE = ['', ' ', '  ', '\t', '\n\n', '\u00a0', '\u3000', '\u2028', '\u200b', '\ufeff'];
const NUMERIC = [
  '0',
  '42',
  '-1',
  '1e309',
  '-0',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '1.5',
  '８０８０',
  '٣',
];
const WORDS = [
  'alpha',
  'bravo',
  'deploy',
  'port',
  '8080',
  'src/auth/login.ts',
  'getUserById',
  'max_retries',
  'pnpm',
];

/** One hostile fragment. */
export const fragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...FTS_SYNTAX) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTROL) },
  { weight: 2, arbitrary: fc.constantFrom(...SURROGATES) },
  { weight: 2, arbitrary: fc.constantFrom(...COMBINING) },
  { weight: 2, arbitrary: fc.constantFrom(...RTL) },
  { weight: 2, arbitrary: fc.constantFrom(...EMOJI) },
  { weight: 2, arbitrary: fc.constantFrom(...CJK) },
  { weight: 2, arbitrary: fc.constantFrom(...WHITESPACE) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMERIC) },
  { weight: 4, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 1, arbitrary: fc.constant(LEAK_MARKER) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }) },
);

/** A fragment the store can hold (no lone surrogate): still FTS syntax, NUL, RTL, emoji, combining marks. */
export const storableFragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...FTS_SYNTAX) },
  { weight: 1, arbitrary: fc.constantFrom(...CONTROL) },
  { weight: 2, arbitrary: fc.constantFrom(...COMBINING) },
  { weight: 2, arbitrary: fc.constantFrom(...RTL) },
  { weight: 2, arbitrary: fc.constantFrom(...EMOJI) },
  { weight: 2, arbitrary: fc.constantFrom(...CJK) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMERIC) },
  { weight: 6, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 1, arbitrary: fc.constant(LEAK_MARKER) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

/** Text the store accepts as content (non-blank, well-formed) that is still hostile to the indexes and queries. */
export const storableText: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...WORDS),
    fc.array(storableFragment, { maxLength: 8 }),
    fc.constantFrom(' ', '', '\u0000', '"', ' OR ', ' NEAR '),
  )
  .map(([first, parts, sep]) => [first, ...parts].join(sep));

/** Mostly `undefined` (an omitted optional field), sometimes a hostile value. */
export function rarely<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
}

const SIZE_1MB = 1 << 20;
const HUGE_SEEDS = ['a', 'alpha ', '数', '🔥', ' ', '"', 'e\u0301', '\u0000', 'NEAR( '];
/** 1 MB strings (one of a few shapes; built once). */
const HUGE: readonly string[] = HUGE_SEEDS.map((s) =>
  s.repeat(Math.ceil(SIZE_1MB / s.length)).slice(0, SIZE_1MB),
);

/** A hostile string: mostly a few fragments joined; rarely (about 1 in 80) a 1 MB string. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 60,
    arbitrary: fc
      .tuple(
        fc.array(fragment, { minLength: 0, maxLength: 8 }),
        fc.constantFrom(' ', '', '\u0000', '"', ' OR '),
      )
      .map(([parts, sep]) => parts.join(sep)),
  },
  { weight: 10, arbitrary: fc.constantFrom(...WHITESPACE) },
  { weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE) },
);

/** A short string that is a valid id or tag value most of the time (no control characters or lone surrogates). */
export const shortStorable: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(fc.constantFrom(...WORDS, ...CJK, ...EMOJI, ...RTL, ...COMBINING, '"', '*', ':', '-', '%')),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((p) => p.join(''));

/** A short hostile string (ids, names, roles): no 1 MB strings, but sometimes over the length caps. */
export const shortText: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.array(fragment, { maxLength: 3 }).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(129), 'y'.repeat(257), 'z'.repeat(513)) },
);

/** Anything that is not what a field expects. */
export const wrongType: fc.Arbitrary<unknown> = fc.constantFrom(
  undefined,
  null,
  true,
  0,
  -1,
  Number.NaN,
  {},
  [],
  ['a'],
  { toString: 'x' },
  () => 'fn',
  Symbol('s'),
  10n,
);

/** Numbers (and things posing as numbers) for importance, confidence, limits, seqs and revisions. */
export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.double() },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -1,
      -0,
      0,
      0.5,
      1,
      1.0000001,
      2,
      3,
      50,
      1000,
      1001,
      2 ** 53,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      -0.5,
    ),
  },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 2000 }) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMERIC, '0.5', '1', '') },
  { weight: 1, arbitrary: wrongType },
);

/** A valid unit number in [0, 1] most of the time, hostile otherwise. */
export const unitNumber: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
  { weight: 2, arbitrary: hostileNumber },
);

/** Vectors for a 128-dimension store: valid, wrong length, NaN/Infinity, zero, wrong type. */
export function hostileVector(dimensions: number): fc.Arbitrary<unknown> {
  const floats = (length: number): fc.Arbitrary<Float32Array> =>
    fc
      .array(fc.float({ min: -1, max: 1, noNaN: true, noDefaultInfinity: true }), {
        minLength: length,
        maxLength: length,
      })
      .map((a) => Float32Array.from(a));
  return fc.oneof(
    { weight: 4, arbitrary: floats(dimensions) },
    {
      weight: 2,
      arbitrary: fc
        .integer({ min: 0, max: dimensions * 2 })
        .chain((n) => floats(n === dimensions ? n + 1 : n)),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          floats(dimensions),
          fc.integer({ min: 0, max: dimensions - 1 }),
          fc.constantFrom(Number.NaN, Infinity, -Infinity),
        )
        .map(([v, i, x]) => {
          v[i] = x;
          return v;
        }),
    },
    { weight: 1, arbitrary: fc.constant(new Float32Array(dimensions)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(
        Array.from({ length: dimensions }, () => 0.1),
        new Float64Array(dimensions).fill(0.1),
        'vector',
        null,
        new Uint8Array(dimensions * 4),
      ),
    },
  );
}

/** Memory kinds: known, unknown, look-alikes, wrong types. */
export const hostileKind: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('fact', 'semantic', 'episodic', 'reflection', 'event', 'persona', 'skill'),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom('Fact', 'FACT', ' fact', 'fact\u0000', 'memory', '', 'facts', 'ｆａｃｔ'),
  },
  { weight: 1, arbitrary: shortText },
  { weight: 1, arbitrary: wrongType },
);

/** Tags: valid `prefix:value`, malformed, overlong, too many, wrong types. */
export const hostileTags: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(
      fc.constantFrom('topic:deploy', 'file:src/a.ts', 'tool:bash', 'x:"*"', 'topic:数据'),
      { maxLength: 3 },
    ),
  },
  {
    weight: 6,
    arbitrary: fc.array(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .tuple(
              fc.constantFrom('topic', 'file', 'tool', 'type', 'x', 'hash', 'seq'),
              fc.oneof({ weight: 3, arbitrary: shortStorable }, { weight: 1, arbitrary: shortText }),
            )
            .map(([p, v]) => `${p}:${v}`),
        },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'noColon',
            ':value',
            'UPPER:x',
            `${'a'.repeat(33)}:x`,
            `file:${'x'.repeat(600)}`,
            'file:',
            'file:a\u0000b',
            'file:\ud800',
            '1x:y',
          ),
        },
        { weight: 1, arbitrary: shortText },
      ),
      { maxLength: 6 },
    ),
  },
  { weight: 1, arbitrary: fc.constant(Array.from({ length: 70 }, (_, i) => `t:${i}`)) },
  { weight: 1, arbitrary: wrongType },
);

/** Turns a value into a raw tool-argument string: valid JSON, or JSON broken in one of several ways. */
export function rawJson(value: unknown): fc.Arbitrary<string> {
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'undefined';
  } catch {
    json = '{';
  }
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(json) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 0, max: Math.max(0, json.length - 1) }).map((n) => json.slice(0, n)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{',
        '}',
        '[',
        'null',
        '[]',
        '"string"',
        '1e999',
        'NaN',
        "{'query': 'single quotes'}",
        '{"query": "alpha",}',
        '{"query": "\\ud800"}',
        '{"query": "a\\u0000b"}',
        '{"query": 1}',
        '{"__proto__": {"polluted": true}, "query": "alpha"}',
        '{"constructor": {"prototype": {"x": 1}}}',
        '   ',
        '',
      ),
    },
    { weight: 1, arbitrary: hostileText },
  );
}
