/** WAT text → WebAssembly binary (SIMD enabled), validated. */
export function compileAttentionKernels(text: string): Promise<Uint8Array>;
