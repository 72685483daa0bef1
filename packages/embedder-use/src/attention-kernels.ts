/**
 * Faster equivalents of three TensorFlow.js wasm kernels that dominate use-lite-512-v1's time besides its dense
 * layers (which XNNPACK already runs well):
 *
 * - `BatchMatMul` with batch dimensions (the attention's query × key and weights × value products, one matrix
 *   pair per sentence and head): TensorFlow.js 4.22 runs these on a scalar loop; `attention-kernels.wat` runs
 *   them with 128-bit SIMD, on TensorFlow.js's own memory.
 * - `Slice` and `SplitV` (the split of the fused query/key/value projection): TensorFlow.js copies the whole
 *   input out of the wasm heap for every slice; these copy only the slice, one contiguous run at a time.
 *
 * Each replacement computes the same values (products summed in another order; the model's vectors agree
 * within 1e-6) and hands every case it does not cover to the original kernel. Installing is best effort: a
 * runtime without WebAssembly SIMD or a backend without the expected memory keeps the original kernels.
 */
import { ATTENTION_KERNELS_WASM_BASE64 } from './attention-kernels.wasm.js';

type TfCore = typeof import('@tensorflow/tfjs-core');
type KernelConfig = import('@tensorflow/tfjs-core').KernelConfig;
type NamedAttrMap = import('@tensorflow/tfjs-core').NamedAttrMap;
type TensorInfo = import('@tensorflow/tfjs-core').TensorInfo;
type DataType = import('@tensorflow/tfjs-core').DataType;

/** The parts of TensorFlow.js's `BackendWasm` these kernels use. */
interface WasmBackend {
  readonly wasm?: { readonly asm?: { readonly memory?: unknown } };
  readonly dataIdMap: { get(dataId: object): { readonly memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: DataType): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array | Int32Array | Uint8Array;
}

interface KernelArgs {
  readonly inputs: Record<string, TensorInfo>;
  readonly attrs?: NamedAttrMap;
  readonly backend: unknown;
}

type AttentionExports = {
  /** C[b,i,j] = Σₖ A[b,i,k]·B[b,j,k]; k a multiple of 4. */
  bmm_nt(a: number, b: number, c: number, batch: number, m: number, n: number, k: number): void;
  /** C[b,i,j] = Σₖ A[b,i,k]·B[b,k,j]; n a multiple of 4. */
  bmm_nn(a: number, b: number, c: number, batch: number, m: number, n: number, k: number): void;
};

/** The part of the global `WebAssembly` used here (the compiler's libraries here do not declare it). */
interface WebAssemblyApi {
  readonly Memory: abstract new (...args: never[]) => object;
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: unknown };
}

const webAssembly = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;

/** The compiled module, once per thread (its instances are per backend memory). */
let compiled: object | undefined;

/** Instantiates the kernels on `memory`; `undefined` where the runtime cannot (no SIMD, no such memory). */
export function instantiateAttentionKernels(memory: unknown): AttentionExports | undefined {
  if (webAssembly === undefined || !(memory instanceof webAssembly.Memory)) return undefined;
  try {
    compiled ??= new webAssembly.Module(Buffer.from(ATTENTION_KERNELS_WASM_BASE64, 'base64'));
    return new webAssembly.Instance(compiled, { env: { memory } }).exports as AttentionExports;
  } catch {
    return undefined;
  }
}

function product(values: readonly number[]): number {
  let p = 1;
  for (const v of values) p *= v;
  return p;
}

function isNumeric(dtype: DataType): boolean {
  return dtype === 'float32' || dtype === 'int32';
}

/** Copies `x[begin : begin + size]` (sizes resolved) into a new output, one contiguous run at a time. */
function sliceInto(backend: WasmBackend, x: TensorInfo, begin: readonly number[], size: readonly number[]) {
  const out = backend.makeOutput([...size], x.dtype);
  const total = product(size);
  if (total === 0) return out;
  // Views after makeOutput: an allocation may have grown (and so replaced) the heap's buffer.
  const source = backend.typedArrayFromHeap(x);
  const target = backend.typedArrayFromHeap(out);
  const rank = x.shape.length;
  // Trailing dimensions taken whole join the innermost run.
  let run = 1;
  let d = rank - 1;
  while (d >= 0 && begin[d] === 0 && size[d] === x.shape[d]) {
    run *= size[d] as number;
    d -= 1;
  }
  if (d < 0) {
    target.set(source.subarray(0, total));
    return out;
  }
  run *= size[d] as number;
  const strides = new Array<number>(rank).fill(1);
  for (let i = rank - 2; i >= 0; i -= 1) strides[i] = (strides[i + 1] as number) * (x.shape[i + 1] as number);
  const index = new Array<number>(d).fill(0);
  let written = 0;
  for (;;) {
    let from = (begin[d] as number) * (strides[d] as number);
    for (let i = 0; i < d; i += 1)
      from += ((begin[i] as number) + (index[i] as number)) * (strides[i] as number);
    target.set(source.subarray(from, from + run), written);
    written += run;
    let i = d - 1;
    while (i >= 0) {
      index[i] = (index[i] as number) + 1;
      if ((index[i] as number) < (size[i] as number)) break;
      index[i] = 0;
      i -= 1;
    }
    if (i < 0) return out;
  }
}

/** Marks a kernel function of this package, so that installing twice replaces nothing twice. */
const REPLACED = Symbol.for('@engram/embedder-use/kernel');

function replaceKernel(
  tf: TfCore,
  name: string,
  make: (original: KernelConfig) => KernelConfig['kernelFunc'],
) {
  const original = tf.getKernel(name, 'wasm');
  if (original === undefined || REPLACED in original.kernelFunc) return;
  const kernelFunc = Object.assign(make(original), { [REPLACED]: true });
  tf.unregisterKernel(name, 'wasm');
  // The registry is global: a wasm backend created later (after `tf.engine().reset()`) runs the original's
  // setup too, so the original kernel it falls back to works there.
  tf.registerKernel({ ...original, kernelFunc });
}

/** A kernel that runs `run` on a float32 or int32 input `x` and hands any other type to the original kernel. */
function forNumericInput(
  original: KernelConfig,
  run: (backend: WasmBackend, x: TensorInfo, attrs: NamedAttrMap | undefined) => TensorInfo | TensorInfo[],
): KernelConfig['kernelFunc'] {
  const kernel: KernelConfig['kernelFunc'] = (args) => {
    const { inputs, attrs, backend } = args as unknown as KernelArgs;
    const x = inputs.x as TensorInfo;
    return isNumeric(x.dtype) ? run(backend as WasmBackend, x, attrs) : original.kernelFunc(args);
  };
  // The kernel carries the name of what it runs (the native test checks which kernels are in use).
  return Object.defineProperty(kernel, 'name', { value: run.name });
}

/** The SIMD kernels on each wasm backend's memory (`null` where they cannot run). */
const instances = new WeakMap<object, AttentionExports | null>();

function kernelsOf(backend: WasmBackend): AttentionExports | undefined {
  let kernels = instances.get(backend);
  if (kernels === undefined) {
    kernels = instantiateAttentionKernels(backend.wasm?.asm?.memory) ?? null;
    instances.set(backend, kernels);
  }
  return kernels ?? undefined;
}

/**
 * Replaces `BatchMatMul`, `Slice` and `SplitV` of the wasm backend (once per process; each call runs on the
 * backend it is given, so a backend created later works too). Returns whether the SIMD matrix kernels run on the
 * active backend; where they cannot, `BatchMatMul` goes to the original kernel.
 */
export function installAttentionKernels(tf: TfCore): boolean {
  if (tf.getBackend() !== 'wasm') return false;
  replaceKernel(
    tf,
    'BatchMatMul',
    (original) =>
      function simdBatchMatMul(args) {
        const { inputs, attrs } = args as unknown as KernelArgs;
        const backend = args.backend as unknown as WasmBackend;
        const kernels = kernelsOf(backend);
        const a = inputs.a as TensorInfo;
        const b = inputs.b as TensorInfo;
        const transposeA = attrs?.transposeA === true;
        const transposeB = attrs?.transposeB === true;
        const rank = a.shape.length;
        // Covered: equal batch dimensions (no broadcast), float32, A not transposed, and a SIMD-wide inner loop.
        let covered = kernels !== undefined && !transposeA && rank >= 3 && b.shape.length === rank;
        covered &&= a.dtype === 'float32' && b.dtype === 'float32';
        for (let i = 0; covered && i < rank - 2; i += 1) covered = a.shape[i] === b.shape[i];
        const m = a.shape[rank - 2] as number;
        const k = a.shape[rank - 1] as number;
        const n = (transposeB ? b.shape[rank - 2] : b.shape[rank - 1]) as number;
        const inner = transposeB ? b.shape[rank - 1] : b.shape[rank - 2];
        covered &&= inner === k && (transposeB ? k : n) % 4 === 0;
        if (!covered || kernels === undefined) return original.kernelFunc(args);
        const out = backend.makeOutput([...a.shape.slice(0, -2), m, n], 'float32');
        const offset = (info: TensorInfo) => backend.dataIdMap.get(info.dataId)?.memoryOffset;
        const [pa, pb, pc] = [offset(a), offset(b), offset(out)];
        if (pa === undefined || pb === undefined || pc === undefined) {
          throw new Error('BatchMatMul: a tensor has no memory of the wasm backend');
        }
        (transposeB ? kernels.bmm_nt : kernels.bmm_nn)(pa, pb, pc, product(a.shape.slice(0, -2)), m, n, k);
        return out;
      },
  );

  replaceKernel(tf, 'Slice', (original) =>
    forNumericInput(original, function runSlice(backend, x, attrs) {
      const [begin, size] = tf.slice_util.parseSliceParams(
        x,
        attrs?.begin as number | number[],
        attrs?.size as number | number[],
      ) as [number[], number[]];
      return sliceInto(backend, x, begin, size);
    }),
  );

  replaceKernel(tf, 'SplitV', (original) =>
    forNumericInput(original, function runSplitV(backend, x, attrs) {
      const axis = tf.util.parseAxisParam(attrs?.axis as number, x.shape)[0] as number;
      const sizes = tf.backend_util.prepareSplitSize(x, attrs?.numOrSizeSplits as number | number[], axis);
      const begin = new Array<number>(x.shape.length).fill(0);
      return sizes.map((part) => {
        const size: number[] = [...x.shape];
        size[axis] = part;
        const slice = sliceInto(backend, x, begin, size);
        begin[axis] = (begin[axis] as number) + part;
        return slice;
      });
    }),
  );
  return kernelsOf(tf.backend() as unknown as WasmBackend) !== undefined;
}
