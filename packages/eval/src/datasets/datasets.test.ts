import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { validateFixture } from '../fixture.js';
import { cmrcToFixture } from './cmrc.js';
import { parseCsv, parseCsvRecords } from './csv.js';
import { locomoToFixture, parseLocomoDate, parseLocomoEvidence } from './locomo.js';
import { parsePythonStringList } from './python-literal.js';
import { readSciFactZip, scifactToFixture } from './scifact.js';
import { crc32, readZip } from './zip.js';

/** Builds a zip archive (stored or deflated entries) byte by byte, the way zip tools lay it out. */
function buildZip(files: { name: string; text: string; method: 0 | 8; zip64?: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const data = Buffer.from(file.text, 'utf8');
    const body = file.method === 8 ? deflateRawSync(data) : data;
    const name = Buffer.from(file.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(file.method, 8);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(file.method, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    // Zip64 style (as Python's zipfile writes when streaming): 0xFFFFFFFF sizes, the real ones in extra 0x0001.
    const extra = Buffer.alloc(file.zip64 === true ? 20 : 0);
    if (file.zip64 === true) {
      central.writeUInt32LE(0xffffffff, 20);
      central.writeUInt32LE(0xffffffff, 24);
      central.writeUInt16LE(extra.length, 30);
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(16, 2);
      extra.writeBigUInt64LE(BigInt(data.length), 4);
      extra.writeBigUInt64LE(BigInt(body.length), 12);
    }
    locals.push(local, name, body);
    centrals.push(central, name, extra);
    offset += local.length + name.length + body.length;
  }
  const dir = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(files.length, 8);
  eocd.writeUInt16LE(files.length, 10);
  eocd.writeUInt32LE(dir.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, eocd]);
}

describe('readZip', () => {
  it('reads stored and deflated entries', () => {
    const zip = buildZip([
      { name: 'a.txt', text: 'plain', method: 0 },
      { name: 'dir/b.csv', text: 'x,y\n1,2\n'.repeat(50), method: 8 },
    ]);
    const entries = readZip(zip);
    expect(entries.map((e) => e.name)).toEqual(['a.txt', 'dir/b.csv']);
    expect(entries[0]?.data.toString()).toBe('plain');
    expect(entries[1]?.data.toString()).toBe('x,y\n1,2\n'.repeat(50));
  });

  it('reads sizes from the zip64 extra field', () => {
    const zip = buildZip([{ name: 'big.txt', text: 'zip64 sized '.repeat(40), method: 8, zip64: true }]);
    expect(readZip(zip)[0]?.data.toString()).toBe('zip64 sized '.repeat(40));
  });

  it('knows the CRC-32 check value', () => {
    // The standard check value of CRC-32/IEEE for "123456789".
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });

  it('rejects a corrupted entry and a buffer that is no zip', () => {
    const zip = buildZip([{ name: 'a.txt', text: 'plain', method: 0 }]);
    zip[30 + 5] = 'X'.charCodeAt(0); // flip the first data byte
    expect(() => readZip(zip)).toThrow(expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }));
    expect(() => readZip(Buffer.from('not a zip at all, just text'))).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
  });
});

describe('parseCsv', () => {
  it('handles quotes, doubled quotes, commas and line breaks inside quoted fields, and CRLF', () => {
    const text = 'id,text\r\n1,"a, ""b""\nc"\r\n2,plain\n';
    expect(parseCsv(text)).toEqual([
      ['id', 'text'],
      ['1', 'a, "b"\nc'],
      ['2', 'plain'],
    ]);
    expect(parseCsvRecords(text)).toEqual([
      { id: '1', text: 'a, "b"\nc' },
      { id: '2', text: 'plain' },
    ]);
  });

  it('rejects an unterminated quote and a row of the wrong width', () => {
    expect(() => parseCsv('a,"b\n')).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
    expect(() => parseCsvRecords('a,b\n1\n')).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
  });
});

describe('parsePythonStringList', () => {
  it('reads comma- and whitespace-separated items with both quote styles and escapes', () => {
    expect(parsePythonStringList("['One.', \"It's two.\"]")).toEqual(['One.', "It's two."]);
    expect(parsePythonStringList("['A line.'\n 'B \\'q\\' \\n \\x41\\u00e9.']")).toEqual([
      'A line.',
      "B 'q' \n Aé.",
    ]);
    expect(parsePythonStringList('[]')).toEqual([]);
  });

  it('rejects what is not a list of strings', () => {
    expect(() => parsePythonStringList('plain text')).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
    expect(() => parsePythonStringList("['open")).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
  });
});

describe('LoCoMo adapter', () => {
  it('repairs evidence ids as the dataset notes say', () => {
    expect(parseLocomoEvidence('D8:6; D9:17')).toEqual(['D8:6', 'D9:17']);
    expect(parseLocomoEvidence('D:11:26')).toEqual(['D11:26']);
    expect(parseLocomoEvidence('D30:05')).toEqual(['D30:5']);
    expect(parseLocomoEvidence('D9:1 D4:4 D4:6')).toEqual(['D9:1', 'D4:4', 'D4:6']);
    expect(parseLocomoEvidence('D')).toEqual([]);
  });

  const sample = [
    {
      sample_id: 'conv-1',
      conversation: {
        speaker_a: 'Ann',
        session_2: [
          { speaker: 'Bob', dia_id: 'D2:1', text: 'Back from Lisbon.', blip_caption: 'a photo of a tram' },
        ],
        session_1: [
          { speaker: 'Ann', dia_id: 'D1:1', text: 'I adopted a cat.' },
          { speaker: 'Bob', dia_id: 'D1:2', text: 'What is its name?' },
        ],
        session_1_date_time: '1:56 pm on 8 May, 2023',
      },
      qa: [
        { question: 'What did Ann adopt?', evidence: ['D1:1'], category: 4 },
        { question: 'Where was Bob?', evidence: ['D:2:01; D1:2', 'D1:2'], category: 2 },
        { question: 'Unknown?', evidence: ['D9:9'], category: 5 },
        { question: 'Empty?', evidence: [], category: 1 },
      ],
    },
    {
      sample_id: 'conv-2',
      conversation: { session_1: [{ speaker: 'Cy', dia_id: 'D1:1', text: 'I adopted a cat.' }] },
      qa: [{ question: 'What did Cy adopt?', evidence: ['D1:1'], category: 1 }],
    },
  ];

  it('builds one agent per conversation, keyed rows, captions, category subsets, and skips questions without evidence', () => {
    const { fixture, stats } = locomoToFixture(sample);
    expect(fixture.corpus.map((r) => [r.id, r.agentId, r.content])).toEqual([
      ['conv-1/D1:1', 'conv-1', 'Ann: I adopted a cat.'],
      ['conv-1/D1:2', 'conv-1', 'Bob: What is its name?'],
      ['conv-1/D2:1', 'conv-1', 'Bob: Back from Lisbon. [image: a photo of a tram]'],
      ['conv-2/D1:1', 'conv-2', 'Cy: I adopted a cat.'],
    ]);
    expect(fixture.queries.map((q) => [q.id, q.agentId, q.subsets, q.relevantIds])).toEqual([
      ['conv-1/q1', 'conv-1', ['cat4-single-hop'], ['conv-1/D1:1']],
      ['conv-1/q2', 'conv-1', ['cat2-temporal'], ['conv-1/D2:1', 'conv-1/D1:2']],
      ['conv-2/q1', 'conv-2', ['cat1-multihop'], ['conv-2/D1:1']],
    ]);
    expect(stats).toMatchObject({
      agents: 2,
      rows: 4,
      queries: 3,
      skippedQuestions: 2,
      droppedEvidence: 1,
      repairedEvidence: 1,
    });
    expect(validateFixture(fixture).ok).toBe(true);
  });

  it('gives every row its session, its date and (for a turn) its place, and each question a reference time', () => {
    const withDates = [
      {
        ...sample[0],
        conversation: { ...sample[0]?.conversation, session_2_date_time: '9:05 am on 25 May, 2023' },
      },
      sample[1],
    ];
    const { fixture } = locomoToFixture(withDates);
    const may8 = Date.UTC(2023, 4, 8, 13, 56);
    const may25 = Date.UTC(2023, 4, 25, 9, 5);
    expect(fixture.corpus.map((r) => [r.id, r.sessionId, r.seq, r.createdAt])).toEqual([
      ['conv-1/D1:1', 'session_1', 1, may8],
      ['conv-1/D1:2', 'session_1', 2, may8],
      ['conv-1/D2:1', 'session_2', 1, may25],
      // No date in the data: no createdAt (the runner's clock applies).
      ['conv-2/D1:1', 'session_1', 1, undefined],
    ]);
    expect(fixture.queries.map((q) => [q.id, q.referenceTime])).toEqual([
      ['conv-1/q1', may25],
      ['conv-1/q2', may25],
      ['conv-2/q1', undefined],
    ]);
    const sessions = locomoToFixture(withDates, { granularity: 'session' }).fixture;
    expect(sessions.corpus.map((r) => [r.id, r.sessionId, r.seq, r.createdAt])).toEqual([
      ['conv-1/session_1', 'session_1', undefined, may8],
      ['conv-1/session_2', 'session_2', undefined, may25],
      ['conv-2/session_1', 'session_1', undefined, undefined],
    ]);
    expect(validateFixture(fixture).ok).toBe(true);
    expect(parseLocomoDate('12:30 am on 1 January, 2024')).toBe(Date.UTC(2024, 0, 1, 0, 30));
    expect(parseLocomoDate('yesterday')).toBeUndefined();
  });

  it('rejects a file of the wrong shape with a typed error', () => {
    expect(() => locomoToFixture({ not: 'locomo' })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
  });
});

describe('SciFact adapter', () => {
  const corpusCsv = [
    'doc_id,title,abstract,structured',
    '11,Cats purr.,"[\'Purring is a vibration.\'\n \'It is ""soothing"".\']",False',
    '22,Dogs bark.,"[\'Barking, loudly.\', ""It\'s a signal.""]",True',
    '33,Birds sing.,[],False',
  ].join('\n');
  const claimsCsv = [
    'id,claim,evidence_doc_id,evidence_label,evidence_sentences,cited_doc_ids',
    '1,Cats vibrate when purring.,11,SUPPORT,[0],[11]',
    '1,Cats vibrate when purring.,22,SUPPORT,[1],[ 11 22]',
    '2,Fish fly.,,,[],[99]',
    '3,Birds sing at dawn.,,,[],[33]',
  ].join('\n');

  it('builds title + abstract documents and one query per claim with the union of cited ids', () => {
    const { fixture, stats } = scifactToFixture({ corpusCsv, claimsCsv });
    expect(fixture.corpus.map((r) => [r.id, r.content])).toEqual([
      ['11', 'Cats purr.\nPurring is a vibration. It is "soothing".'],
      ['22', "Dogs bark.\nBarking, loudly. It's a signal."],
      ['33', 'Birds sing.'],
    ]);
    expect(fixture.queries.map((q) => [q.id, q.text, q.relevantIds])).toEqual([
      ['claim-1', 'Cats vibrate when purring.', ['11', '22']],
      ['claim-3', 'Birds sing at dawn.', ['33']],
    ]);
    expect(stats).toMatchObject({ rows: 3, queries: 2, judgements: 3, missingDocs: 1, skippedClaims: 1 });
    expect(validateFixture(fixture).ok).toBe(true);
  });

  it('reads both files out of the zip archive', () => {
    const zip = buildZip([
      { name: 'claims_validation.csv', text: claimsCsv, method: 8 },
      { name: 'corpus_train.csv', text: corpusCsv, method: 8 },
    ]);
    expect(readSciFactZip(zip)).toEqual({ corpusCsv, claimsCsv });
    const withTrain = buildZip([
      { name: 'scifact/claims_train.csv', text: claimsCsv, method: 8 },
      { name: 'scifact/claims_validation.csv', text: claimsCsv, method: 8 },
      { name: 'scifact/corpus_train.csv', text: corpusCsv, method: 0 },
    ]);
    expect(readSciFactZip(withTrain)).toEqual({ corpusCsv, claimsCsv, trainClaimsCsv: claimsCsv });
    const missing = buildZip([{ name: 'corpus_train.csv', text: corpusCsv, method: 0 }]);
    expect(() => readSciFactZip(missing)).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
  });
});

describe('CMRC adapter', () => {
  it('makes each paragraph a document and each question a query for its own paragraph', () => {
    const data = {
      version: 'v1.0',
      data: [
        {
          id: 'DEV_0',
          paragraphs: [
            {
              id: 'DEV_0',
              context: '《战国无双3》是由光荣和ω-force开发的。',
              qas: [
                { id: 'DEV_0_QUERY_0', question: '《战国无双3》是由哪两个公司合作开发的？', answers: [] },
                { id: 'DEV_0_QUERY_1', question: '是什么？', answers: [] },
              ],
            },
          ],
        },
        {
          id: 'DEV_1',
          paragraphs: [
            {
              id: 'DEV_1',
              context: '北京是中国的首都。',
              qas: [{ id: 'DEV_1_QUERY_0', question: '中国的首都是哪里？' }],
            },
          ],
        },
      ],
    };
    const { fixture, stats } = cmrcToFixture(data);
    expect(fixture.corpus.map((r) => r.id)).toEqual(['DEV_0', 'DEV_1']);
    expect(fixture.queries.map((q) => [q.id, q.relevantIds])).toEqual([
      ['DEV_0_QUERY_0', ['DEV_0']],
      ['DEV_0_QUERY_1', ['DEV_0']],
      ['DEV_1_QUERY_0', ['DEV_1']],
    ]);
    expect(stats).toEqual({ rows: 2, queries: 3, skippedQuestions: 0 });
    expect(validateFixture(fixture).ok).toBe(true);
  });

  it('rejects a file that is not SQuAD-shaped', () => {
    expect(() => cmrcToFixture([1, 2])).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_DATASET' }),
    );
  });
});
