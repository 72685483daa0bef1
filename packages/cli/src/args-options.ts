/**
 * Reads the options and positional arguments of one subcommand. `node:util` `parseArgs` splits the words
 * into tokens (non-strict, so it never throws for a user's mistake); the checks here run on those structured
 * tokens — option names, values, inline or not — and never on the wording of Node's error messages.
 */
import { parseArgs } from 'node:util';
import type { CommandSpec } from './args-spec.js';
import { ArgumentError } from './args-values.js';
import { clip } from './terminal-text.js';

/** The options and positional arguments of one invocation, before validation of their values. */
export interface RawArguments {
  readonly values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>;
  readonly positionals: readonly string[];
}

/** What `parseArgs` would call an ambiguous value: a separate word starting with `-` (but not `-` alone). */
function looksLikeOption(value: string): boolean {
  return value.length > 1 && value.startsWith('-');
}

/**
 * Splits `args` by the options of `spec`. Throws an {@link ArgumentError} for an unknown option, a string
 * option without a value (or with a separate value that starts with `-`), and a boolean option given one.
 */
export function readArguments(spec: CommandSpec, args: readonly string[]): RawArguments {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [option, o] of Object.entries(spec.options)) {
    options[option] = {
      type: o.type,
      ...(o.short === undefined ? {} : { short: o.short }),
      ...(o.multiple === true ? { multiple: true } : {}),
    };
  }
  const parsed = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    const name = clip(token.rawName);
    const option = Object.hasOwn(spec.options, token.name) ? spec.options[token.name] : undefined;
    if (option === undefined) {
      const refused = Object.hasOwn(spec.refuses ?? {}, token.name) ? spec.refuses?.[token.name] : undefined;
      throw new ArgumentError(
        refused === undefined ? `unknown option ${name}` : `${name} is not taken here: ${refused}`,
      );
    }
    if (option.type === 'boolean') {
      if (token.value !== undefined) throw new ArgumentError(`option ${name} does not take a value`);
      continue;
    }
    if (token.value === undefined) throw new ArgumentError(`option ${name} needs a value`);
    if (!token.inlineValue && looksLikeOption(token.value)) {
      throw new ArgumentError(
        `option ${name} needs a value (write ${name}=<value> for a value starting with -)`,
      );
    }
  }
  return { values: parsed.values as RawArguments['values'], positionals: parsed.positionals };
}
