/**
 * Test support (excluded from the build): writes two tiny BERT-shaped ONNX models with a WordPiece tokenizer, so
 * the tests load, run and score real models offline without downloading anything.
 *
 * - The cross-encoder (`BertForSequenceClassification`, one label): `logits = Σ_t mask_t · weight[token_t]` over
 *   the pair `[CLS] query [SEP] document [SEP]` — a document scores by the weights of its words.
 * - The sentence embedder (`BertModel`): `last_hidden_state = embedding[token]`, a fixed table; the
 *   feature-extraction pipeline mean-pools and normalises it.
 *
 * The ONNX protobuf is written by hand (ModelProto, opset 13): a few fields of onnx.proto3 are all it needs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The vocabulary after the special tokens `[PAD] [UNK] [CLS] [SEP]` (ids 0..3). */
export const TINY_VOCABULARY: readonly string[] = [
  'the',
  'deploy',
  'runs',
  'on',
  'friday',
  'lunch',
  'is',
  'at',
  'noon',
  'preferred',
  'rollback',
  'canary',
  'flag',
  'billing',
  'service',
  'when',
  'do',
  'we',
  'cats',
  'dogs',
  'pets',
  '?',
  '.',
];

/** The cross-encoder's weight of each word (the others weigh 0). */
export const TINY_RERANK_WEIGHTS: Readonly<Record<string, number>> = {
  preferred: 3,
  rollback: 2,
  canary: 1,
  lunch: -1,
};

/** The embedder's width: one dimension per token, so a mean-pooled vector is the text's bag of words. */
export const TINY_EMBEDDING_DIMENSIONS = 32;

// --- A minimal protobuf writer -----------------------------------------------------------------------------

function varint(value: number): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, BigInt(value));
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

type Field = number[];
const intField = (no: number, value: number): Field => [...varint(no << 3), ...varint(value)];
const bytesField = (no: number, bytes: Uint8Array | number[]): Field => [
  ...varint((no << 3) | 2),
  ...varint(bytes.length),
  ...bytes,
];
const strField = (no: number, text: string): Field => bytesField(no, [...new TextEncoder().encode(text)]);
const msg = (...fields: Field[]): number[] => fields.flat();

const FLOAT = 1;
const INT64 = 7;

function tensor(name: string, dims: readonly number[], type: number, values: readonly number[]): number[] {
  const raw =
    type === FLOAT
      ? new Uint8Array(Float32Array.from(values).buffer)
      : new Uint8Array(BigInt64Array.from(values.map((v) => BigInt(v))).buffer);
  return msg(...dims.map((d) => intField(1, d)), intField(2, type), strField(8, name), bytesField(9, raw));
}

function valueInfo(name: string, type: number, dims: readonly (number | string)[]): number[] {
  const shape = msg(
    ...dims.map((d) => bytesField(1, typeof d === 'number' ? intField(1, d) : strField(2, d))),
  );
  const tensorType = msg(intField(1, type), bytesField(2, shape));
  return msg(strField(1, name), bytesField(2, msg(bytesField(1, tensorType))));
}

function node(
  op: string,
  inputs: readonly string[],
  outputs: readonly string[],
  attrs: number[][] = [],
): number[] {
  return msg(
    ...inputs.map((i) => strField(1, i)),
    ...outputs.map((o) => strField(2, o)),
    strField(3, `${op}_${outputs[0]}`),
    strField(4, op),
    ...attrs.map((a) => bytesField(5, a)),
  );
}

/** An int attribute (AttributeProto: name 1, i 3, type 20 = INT 2). */
const intAttr = (name: string, value: number): number[] =>
  msg(strField(1, name), intField(3, value), intField(20, 2));

function model(graph: number[]): Uint8Array {
  const opset = msg(strField(1, ''), intField(2, 13));
  return Uint8Array.from(
    msg(intField(1, 7), strField(2, 'engram-tiny'), bytesField(7, graph), bytesField(8, opset)),
  );
}

// --- The two graphs ------------------------------------------------------------------------------------------

const VOCAB_SIZE = 4 + TINY_VOCABULARY.length;
const IDS = valueInfo('input_ids', INT64, ['batch', 'sequence']);
const MASK = valueInfo('attention_mask', INT64, ['batch', 'sequence']);
const TYPES = valueInfo('token_type_ids', INT64, ['batch', 'sequence']);

function crossEncoderGraph(): number[] {
  const weights = [0, 0, 0, 0, ...TINY_VOCABULARY.map((w) => TINY_RERANK_WEIGHTS[w] ?? 0)];
  return msg(
    bytesField(1, node('Gather', ['weights', 'input_ids'], ['gathered'])),
    bytesField(1, node('Cast', ['attention_mask'], ['mask_f'], [intAttr('to', FLOAT)])),
    bytesField(1, node('Unsqueeze', ['mask_f', 'axis_two'], ['mask_3d'])),
    bytesField(1, node('Mul', ['gathered', 'mask_3d'], ['masked'])),
    bytesField(1, node('ReduceSum', ['masked', 'axis_one'], ['logits'], [intAttr('keepdims', 0)])),
    strField(2, 'tiny_cross_encoder'),
    bytesField(5, tensor('weights', [VOCAB_SIZE, 1], FLOAT, weights)),
    bytesField(5, tensor('axis_two', [1], INT64, [2])),
    bytesField(5, tensor('axis_one', [1], INT64, [1])),
    bytesField(11, IDS),
    bytesField(11, MASK),
    bytesField(11, TYPES),
    bytesField(12, valueInfo('logits', FLOAT, ['batch', 1])),
  );
}

/** The embedding of token id `t`: its own dimension, plus a little of a fixed pattern (the specials: small). */
function embeddingRow(t: number): number[] {
  return Array.from({ length: TINY_EMBEDDING_DIMENSIONS }, (_, d) =>
    t < 4 ? 0.01 : (d === t ? 1 : 0) + 0.05 * Math.sin((t + 1) * (d + 1)),
  );
}

function embedderGraph(): number[] {
  const table: number[] = [];
  for (let t = 0; t < VOCAB_SIZE; t += 1) table.push(...embeddingRow(t));
  return msg(
    bytesField(1, node('Gather', ['embeddings', 'input_ids'], ['last_hidden_state'])),
    strField(2, 'tiny_embedder'),
    bytesField(5, tensor('embeddings', [VOCAB_SIZE, TINY_EMBEDDING_DIMENSIONS], FLOAT, table)),
    bytesField(11, IDS),
    bytesField(11, MASK),
    bytesField(11, TYPES),
    bytesField(12, valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', TINY_EMBEDDING_DIMENSIONS])),
  );
}

// --- Tokenizer and config ------------------------------------------------------------------------------------

function tokenizerJson(): unknown {
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];
  const vocab: Record<string, number> = {};
  [...specials, ...TINY_VOCABULARY].forEach((w, i) => {
    vocab[w] = i;
  });
  const special = (id: string, typeId: number) => ({ SpecialToken: { id, type_id: typeId } });
  const sequence = (id: string, typeId: number) => ({ Sequence: { id, type_id: typeId } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0)],
      pair: [
        special('[CLS]', 0),
        sequence('A', 0),
        special('[SEP]', 0),
        sequence('B', 1),
        special('[SEP]', 1),
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

const TOKENIZER_CONFIG = {
  tokenizer_class: 'BertTokenizer',
  do_lower_case: true,
  model_max_length: 512,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
};

function writeModel(dir: string, config: unknown, onnx: Uint8Array): string {
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson()));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(TOKENIZER_CONFIG));
  writeFileSync(join(dir, 'onnx', 'model.onnx'), onnx);
  return dir;
}

const BERT = { model_type: 'bert', vocab_size: VOCAB_SIZE, max_position_embeddings: 512, type_vocab_size: 2 };

/** Writes the tiny cross-encoder into `dir` (created); returns `dir`. */
export function writeTinyCrossEncoder(dir: string): string {
  return writeModel(
    dir,
    {
      ...BERT,
      architectures: ['BertForSequenceClassification'],
      id2label: { 0: 'LABEL_0' },
      label2id: { LABEL_0: 0 },
      hidden_size: 1,
    },
    model(crossEncoderGraph()),
  );
}

/** Writes the tiny sentence embedder into `dir` (created); returns `dir`. */
export function writeTinyEmbedder(dir: string): string {
  return writeModel(
    dir,
    { ...BERT, architectures: ['BertModel'], hidden_size: TINY_EMBEDDING_DIMENSIONS },
    model(embedderGraph()),
  );
}
