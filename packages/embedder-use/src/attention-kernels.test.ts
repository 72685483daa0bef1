import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { compileAttentionKernels } from '../scripts/compile-kernels.mjs';
import { instantiateAttentionKernels } from './attention-kernels.js';
import { ATTENTION_KERNELS_WASM_BASE64 } from './attention-kernels.wasm.js';

const { Memory } = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (d: { initial: number }) => { buffer: ArrayBuffer } };
  }
).WebAssembly;

/** A deterministic pseudo-random fill in [-1, 1). */
function fill(length: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < length; i += 1) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** C[b] = A[b] · B[b] (or B[b]ᵀ), in double precision. */
function reference(
  a: Float32Array,
  b: Float32Array,
  batch: number,
  m: number,
  n: number,
  k: number,
  bt: boolean,
) {
  const c = new Float64Array(batch * m * n);
  for (let p = 0; p < batch; p += 1) {
    for (let i = 0; i < m; i += 1) {
      for (let j = 0; j < n; j += 1) {
        let sum = 0;
        for (let q = 0; q < k; q += 1) {
          const bv = bt ? (b[p * n * k + j * k + q] as number) : (b[p * k * n + q * n + j] as number);
          sum += (a[p * m * k + i * k + q] as number) * bv;
        }
        c[p * m * n + i * n + j] = sum;
      }
    }
  }
  return c;
}

describe('attention kernels (SIMD batched products)', () => {
  it('are built from attention-kernels.wat: the embedded binary is what the source compiles to', async () => {
    const text = await readFile(new URL('./attention-kernels.wat', import.meta.url), 'utf8');
    const binary = Buffer.from(await compileAttentionKernels(text));
    expect(binary.toString('base64')).toBe(ATTENTION_KERNELS_WASM_BASE64);
  });

  it('refuse anything but a WebAssembly memory', () => {
    expect(instantiateAttentionKernels(undefined)).toBeUndefined();
    expect(instantiateAttentionKernels(new ArrayBuffer(64))).toBeUndefined();
  });

  // Shapes with every tail: rows and columns not multiples of 4 or 16, one-element batches, the model's sizes.
  const shapes: [number, number, number, number][] = [
    [1, 1, 1, 4],
    [3, 5, 7, 8],
    [2, 9, 6, 4],
    [1, 3, 13, 12],
    [4, 17, 33, 20],
    [2, 120, 120, 64],
    [1, 31, 120, 128],
  ];

  /** Runs one kernel on fresh memory and compares it with the double-precision product. */
  function check(kind: 'bmm_nt' | 'bmm_nn', batch: number, m: number, n: number, k: number) {
    const memory = new Memory({ initial: 64 });
    const kernels = instantiateAttentionKernels(memory);
    expect(kernels).toBeDefined();
    const a = fill(batch * m * k, 1);
    const b = fill(batch * n * k, 2);
    const heap = new Float32Array(memory.buffer);
    const [pa, pb, pc] = [16, 16 + a.length * 4, 16 + (a.length + b.length) * 4];
    heap.set(a, pa / 4);
    heap.set(b, pb / 4);
    heap.fill(Number.NaN, pc / 4, pc / 4 + batch * m * n + 8);
    kernels?.[kind](pa, pb, pc, batch, m, n, k);
    const want = reference(a, b, batch, m, n, k, kind === 'bmm_nt');
    const got = heap.subarray(pc / 4, pc / 4 + want.length);
    for (let i = 0; i < want.length; i += 1)
      expect(Math.abs((got[i] as number) - (want[i] as number))).toBeLessThan(1e-4);
    // Nothing written past the output.
    expect(Number.isNaN(heap[pc / 4 + want.length] as number)).toBe(true);
  }

  it.each(shapes)(
    'bmm_nt (A·Bᵀ) matches a double-precision product: batch %i, %i×%i, k %i',
    (batch, m, n, k) => {
      check('bmm_nt', batch, m, n, k);
    },
  );

  // bmm_nn needs n a multiple of 4; here the shared dimension takes the odd sizes.
  it.each(shapes)(
    'bmm_nn (A·B) matches a double-precision product: batch %i, %i×%i, n %i',
    (batch, m, k, n) => {
      check('bmm_nn', batch, m, n, k);
    },
  );
});
