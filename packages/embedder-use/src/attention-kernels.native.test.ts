import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createUseEmbedder } from './index.js';

// Loading the model on the wasm backend installs the package's kernels into this process's TensorFlow.js.
beforeAll(async () => {
  await createUseEmbedder().load();
});

function random(shape: number[], seed: number, dtype: 'float32' | 'int32' = 'float32') {
  const size = shape.reduce((p, q) => p * q, 1);
  const values: number[] = [];
  let s = seed;
  for (let i = 0; i < size; i += 1) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    values.push(dtype === 'int32' ? s % 1000 : s / 2 ** 31 - 1);
  }
  return tf.tensor(values, shape, dtype);
}

/** The product computed in double precision from the tensors' values, with TensorFlow.js's broadcasting. */
function referenceMatMul(a: tf.Tensor, b: tf.Tensor, transposeA: boolean, transposeB: boolean): number[] {
  const swapLast = (t: tf.Tensor) => {
    const perm = [...t.shape.keys()];
    perm.push(perm.splice(-2, 1)[0] as number);
    return tf.transpose(t, perm);
  };
  const a3 = transposeA ? swapLast(a) : a;
  const b3 = transposeB ? swapLast(b) : b;
  const [m, k] = a3.shape.slice(-2) as [number, number];
  const n = b3.shape.at(-1) as number;
  const av = a3.dataSync();
  const bv = b3.dataSync();
  const batchA = av.length / (m * k);
  const batchB = bv.length / (k * n);
  const batch = Math.max(batchA, batchB);
  const out: number[] = [];
  for (let p = 0; p < batch; p += 1) {
    const pa = batchA === 1 ? 0 : p;
    const pb = batchB === 1 ? 0 : p;
    for (let i = 0; i < m; i += 1) {
      for (let j = 0; j < n; j += 1) {
        let sum = 0;
        for (let q = 0; q < k; q += 1)
          sum += (av[pa * m * k + i * k + q] as number) * (bv[pb * k * n + q * n + j] as number);
        out.push(sum);
      }
    }
  }
  return out;
}

describe('the wasm kernels this package installs', () => {
  it('are in use: the batched products run on the SIMD kernel', () => {
    expect(tf.getBackend()).toBe('wasm');
    expect(tf.getKernel('BatchMatMul', 'wasm')?.kernelFunc.name).toBe('simdBatchMatMul');
    expect(tf.getKernel('Slice', 'wasm')?.kernelFunc.name).toBe('runSlice');
    expect(tf.getKernel('SplitV', 'wasm')?.kernelFunc.name).toBe('runSplitV');
  });

  // Covered cases (batched, k or n a multiple of 4) and the ones handed to TensorFlow.js's own kernel.
  const cases: [string, number[], number[], boolean, boolean][] = [
    ['attention scores, A·Bᵀ', [2, 4, 9, 64], [2, 4, 9, 64], false, true],
    ['attention values, A·B', [2, 4, 9, 9], [2, 4, 9, 64], false, false],
    ['odd sizes, A·Bᵀ', [3, 5, 12], [3, 7, 12], false, true],
    ['odd sizes, A·B', [3, 5, 7], [3, 7, 12], false, false],
    ['k not a multiple of 4 (original kernel)', [2, 5, 6], [2, 7, 6], false, true],
    ['broadcast B (original kernel)', [2, 5, 8], [8, 12], false, false],
    ['transposed A (original kernel)', [2, 8, 5], [2, 8, 12], true, false],
    ['plain matrices (original kernel)', [5, 8], [8, 12], false, false],
  ];
  it.each(cases)('matMul agrees with a double-precision product: %s', (_name, sa, sb, ta, tb) => {
    const a = random(sa, 7);
    const b = random(sb, 11);
    const got = tf.matMul(a, b, ta, tb);
    const want = referenceMatMul(a, b, ta, tb);
    const values = got.dataSync();
    expect(values.length).toBe(want.length);
    want.forEach((w, i) => {
      expect(Math.abs((values[i] as number) - w)).toBeLessThan(1e-4);
    });
    tf.dispose([a, b, got]);
  });

  it('slices and splits float32, int32 and bool tensors exactly', () => {
    for (const dtype of ['float32', 'int32'] as const) {
      const x = random([4, 5, 6], 3, dtype);
      const nested = x.arraySync() as number[][][];
      const slice = tf.slice(x, [1, 0, 2], [2, -1, 3]);
      expect(slice.arraySync()).toEqual(
        nested.slice(1, 3).map((plane) => plane.map((row) => row.slice(2, 5))),
      );
      expect(tf.slice(x, [2], [1]).arraySync()).toEqual(nested.slice(2, 3));
      expect(tf.slice(x, [0, 0, 0], [0, 5, 6]).shape).toEqual([0, 5, 6]);
      const parts = tf.split(x, [2, 3, 1], 2);
      expect(parts.map((p) => p.arraySync())).toEqual([
        nested.map((plane) => plane.map((row) => row.slice(0, 2))),
        nested.map((plane) => plane.map((row) => row.slice(2, 5))),
        nested.map((plane) => plane.map((row) => row.slice(5, 6))),
      ]);
      expect(tf.split(x, 2, 0).map((p) => p.arraySync())).toEqual([nested.slice(0, 2), nested.slice(2, 4)]);
    }
    const flags = tf.tensor2d([true, false, true, true, false, false], [2, 3], 'bool');
    expect(tf.slice(flags, [0, 1], [2, 2]).arraySync()).toEqual([
      [0, 1],
      [0, 0],
    ]);
  });

  it('slice whole inputs, ranks 1 and 5, and keep every value when the heap grows between calls', () => {
    const line = random([9], 4);
    expect(Array.from(tf.slice(line, [2], [3]).dataSync())).toEqual(Array.from(line.dataSync().slice(2, 5)));
    expect(Array.from(tf.slice(line, [0], [-1]).dataSync())).toEqual(Array.from(line.dataSync()));
    const five = random([2, 3, 2, 3, 4], 6, 'int32');
    const flat = Array.from(five.dataSync());
    const got = Array.from(tf.slice(five, [1, 1, 0, 2, 1], [1, 2, 2, 1, 3]).dataSync());
    const want: number[] = [];
    for (const b of [1, 2])
      for (const c of [0, 1])
        for (const e of [1, 2, 3]) want.push(flat[72 + b * 24 + c * 12 + 2 * 4 + e] as number);
    expect(got).toEqual(want);
    // Zero-sized products: no rows, and an empty shared dimension (all zeros).
    expect(tf.matMul(tf.zeros([2, 0, 8]), random([2, 5, 8], 2), false, true).shape).toEqual([2, 0, 5]);
    expect(Array.from(tf.matMul(tf.zeros([2, 3, 0]), tf.zeros([2, 0, 4])).dataSync())).toEqual(
      new Array(24).fill(0),
    );
    // Tensors made before the wasm memory grows are read through the grown memory.
    const [a, b] = [random([2, 4, 9, 64], 7), random([2, 4, 9, 64], 11)];
    const before = Array.from(tf.matMul(a, b, false, true).dataSync());
    const large = tf.zeros([64 * 1024 * 1024]);
    expect(Array.from(tf.matMul(a, b, false, true).dataSync())).toEqual(before);
    expect(tf.split(a, [16, 48], 3)[1]?.shape).toEqual([2, 4, 9, 48]);
    tf.dispose([line, five, a, b, large]);
  });

  // Last: resetting the engine disposes the model loaded above.
  it('keep working, falling back included, on a wasm backend created after the model loaded', async () => {
    tf.engine().reset();
    expect(await tf.setBackend('wasm')).toBe(true);
    expect(tf.getKernel('BatchMatMul', 'wasm')?.kernelFunc.name).toBe('simdBatchMatMul');
    for (const [_name, sa, sb, ta, tb] of cases.slice(0, 2).concat(cases.slice(-3))) {
      const a = random(sa, 5);
      const b = random(sb, 9);
      const values = tf.matMul(a, b, ta, tb).dataSync();
      referenceMatMul(a, b, ta, tb).forEach((w, i) => {
        expect(Math.abs((values[i] as number) - w)).toBeLessThan(1e-4);
      });
    }
    const x = random([3, 4], 1, 'int32');
    const nested = x.arraySync() as number[][];
    expect(tf.slice(x, [1, 1], [2, 2]).arraySync()).toEqual(nested.slice(1, 3).map((row) => row.slice(1, 3)));
    expect(tf.split(x, [1, 3], 1).map((p) => p.arraySync())).toEqual([
      nested.map((row) => row.slice(0, 1)),
      nested.map((row) => row.slice(1, 4)),
    ]);
  });
});
