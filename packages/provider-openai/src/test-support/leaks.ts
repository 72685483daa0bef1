/** Test support: finds where a secret would show up when an error is printed, logged or serialised. */
import { inspect } from 'node:util';

/** The renderings of an error a log line or a diagnostics dump could contain, its causes included. */
function renderings(error: unknown): { readonly surface: string; readonly text: string }[] {
  const out: { surface: string; text: string }[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth += 1) {
    const prefix = depth === 0 ? 'error' : `cause[${depth}]`;
    out.push({ surface: `String(${prefix})`, text: String(current) });
    if (typeof current === 'object') {
      const { message, stack } = current as { message?: unknown; stack?: unknown };
      if (typeof message === 'string') out.push({ surface: `${prefix}.message`, text: message });
      if (typeof stack === 'string') out.push({ surface: `${prefix}.stack`, text: stack });
      out.push({ surface: `JSON.stringify(${prefix})`, text: JSON.stringify(current) ?? '' });
    }
    out.push({ surface: `inspect(${prefix})`, text: inspect(current, { depth: 8, showHidden: true }) });
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return out;
}

/** Lists every surface of `error` (and its causes) that contains one of `secrets`; empty when nothing leaks. */
export function leakedSurfaces(error: unknown, secrets: readonly string[]): string[] {
  return renderings(error)
    .filter(({ text }) => secrets.some((secret) => text.includes(secret)))
    .map(({ surface }) => surface);
}
