/** The process surface a command uses, injected so commands stay testable and never touch globals. */

/** A writable text stream (process.stdout / process.stderr or a test sink). */
export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** What a command may use of the process. */
export interface CliIo {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  /** Directory relative paths resolve against. */
  readonly cwd: string;
  /** Environment variables (provider configuration). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the process is asked to stop (SIGINT, SIGTERM); long-running commands await it. */
  readonly stopSignal: Promise<void>;
  /** The readable side of stdio for the MCP server (process.stdin). */
  readonly stdin?: NodeJS.ReadableStream;
  /** The writable side of stdio for the MCP server (process.stdout as a stream). */
  readonly stdoutStream?: NodeJS.WritableStream;
  /** The script the process runs (`process.argv[1]`), to print follow-up commands a user can paste. */
  readonly entry?: string;
}
