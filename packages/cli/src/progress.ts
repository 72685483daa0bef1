/**
 * Progress on stderr, TTY-aware: a redrawn bar on a terminal, a few plain lines otherwise (CI logs, pipes).
 */
import { renderProgressBar } from './format.js';

/** Where progress goes: a stream-like sink. */
export interface ProgressSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/** A progress reporter for one task. */
export interface Progress {
  update(done: number, total: number): void;
  /** Ends the bar (a final line). Idempotent. */
  finish(): void;
}

/** Plain-line mode prints at most this many intermediate lines (every 25 %). */
const PLAIN_STEPS = 4;

/**
 * Creates a progress reporter: a bar redrawn in place on a TTY, plain lines at 0/25/50/75/100 % otherwise.
 * Nothing is printed for an empty task (total 0).
 */
export function createProgress(sink: ProgressSink, label: string): Progress {
  const tty = sink.isTTY === true;
  let last = '';
  let lastStep = -1;
  let started = false;
  let finished = false;
  let latest: { done: number; total: number } = { done: 0, total: 0 };
  return {
    update(done: number, total: number): void {
      if (finished || total <= 0) return;
      latest = { done, total };
      if (tty) {
        const line = renderProgressBar(done, total, 28, label);
        started = true;
        if (line !== last) {
          sink.write(`\r${line}\u001b[K`);
          last = line;
        }
        return;
      }
      const step = Math.floor((Math.min(done, total) / total) * PLAIN_STEPS);
      if (step > lastStep) {
        started = true;
        lastStep = step;
        last = `${label}: ${done}/${total}\n`;
        sink.write(last);
      }
    },
    finish(): void {
      if (finished) return;
      finished = true;
      if (!started) return;
      if (tty) {
        sink.write(`\r${renderProgressBar(latest.done, latest.total, 28, label)}\u001b[K\n`);
      } else {
        const final = `${label}: ${latest.done}/${latest.total}\n`;
        if (final !== last) sink.write(final);
      }
    },
  };
}
