/** Help texts and usage hints of the `engram` command line, built from the option table in `args-spec.ts`. */
import { COMMAND_NAMES, type CommandName, SPECS } from './args-spec.js';

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(1, width - text.length));
}

/** The one-line usage of a subcommand, e.g. `engram search <query> [--agent <id>] …`. */
export function usageLine(name: CommandName): string {
  const spec = SPECS[name];
  const parts = [`engram ${name}`];
  for (const p of spec.positionals) parts.push(`<${p.name}>`);
  for (const [option, o] of Object.entries(spec.options)) {
    if (option === 'help') continue;
    parts.push(o.type === 'string' ? `[--${option} <${o.value ?? 'value'}>]` : `[--${option}]`);
  }
  return parts.join(' ');
}

/** The help text of one subcommand. */
export function commandHelp(name: CommandName): string {
  const spec = SPECS[name];
  const lines = [`Usage: ${usageLine(name)}`, '', spec.summary, ''];
  if (spec.positionals.length > 0) {
    lines.push('Arguments:');
    for (const p of spec.positionals) lines.push(`  ${pad(`<${p.name}>`, 24)}${p.description}`);
    lines.push('');
  }
  lines.push('Options:');
  for (const [option, o] of Object.entries(spec.options)) {
    const flag = `${o.short === undefined ? '    ' : `-${o.short}, `}--${option}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`;
    lines.push(`  ${pad(flag, 24)}${o.description}`);
  }
  if (spec.details !== undefined) lines.push('', ...spec.details);
  lines.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  return `${lines.join('\n')}\n`;
}

/** The top-level help text. */
export function mainHelp(): string {
  const lines = [
    'Usage: engram <command> [options]',
    '',
    'Engram: embedded, observable long-term memory for AI agents (one SQLite file).',
    '',
    'Commands:',
    ...COMMAND_NAMES.map((name) => `  ${pad(name, 12)}${SPECS[name].summary}`),
    '',
    'Every command takes --db <file> (default .engram/engram.db; the demo uses .engram/demo.db) and --help.',
    'An encrypted database opens with --key-file <file> or the ENGRAM_KEY environment variable.',
    '',
    'search, get, list, history, export, health and serve only read: they open the file read-only, never wait',
    'for a writer, and never create, convert or migrate it. remember, ingest, import and mcp create a missing',
    'store; the other commands need --create for that. A file that is not an Engram store is refused and left',
    'byte-identical.',
    '',
    'Users: one agent serves many users. --user <id> on remember, search, get, list, update, forget, history,',
    "ingest, maintain, export and mcp acts for one user of the agent: the agent's own memories and that user's,",
    "never another user's (another user's memory is not found); writes carry that user. ingest also takes",
    '--session. A command refuses an option it would ignore (exit 2).',
    '',
    'Options:',
    '  -h, --help      show this help',
    '  -v, --version   print the version',
    '',
    "Run 'engram <command> --help' for a command's options.",
  ];
  return `${lines.join('\n')}\n`;
}

/** The usage line of a command and where to read more, printed under an argument error. */
export function commandHint(name: CommandName): string {
  return `Usage: ${usageLine(name)}\nRun 'engram ${name} --help' for details.`;
}

/** The hint printed under an error that names no command. */
export const MAIN_HINT = "Usage: engram <command> [options]\nRun 'engram --help' for the list of commands.";
