import initWabt from 'wabt';

/** WAT text → WebAssembly binary (SIMD enabled), validated. */
export async function compileAttentionKernels(text) {
  const wabt = await initWabt();
  const module = wabt.parseWat('attention-kernels.wat', text, { simd: true });
  try {
    module.validate();
    return Uint8Array.from(module.toBinary({}).buffer);
  } finally {
    module.destroy();
  }
}
