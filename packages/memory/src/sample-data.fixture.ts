/**
 * A small sample for the composition tests: a coding agent's session about an outage and a Chinese assistant's
 * session (two agents), and facts for each — among them a near pair that differs in a number, and Chinese facts
 * that share no words.
 */
import type { EventInput } from '@engram/store';

/** One session of the sample. */
export interface SampleSession {
  readonly agentId: string;
  readonly sessionId: string;
  readonly events: readonly EventInput[];
}

/** One fact to remember. */
export interface SampleFact {
  readonly agentId: string;
  readonly content: string;
}

type Turn =
  | readonly ['user' | 'assistant', string]
  | readonly ['call', string, Readonly<Record<string, unknown>>]
  | readonly ['result', string, string];

/** Numbers the turns of a session from 1 as events. */
function session(agentId: string, sessionId: string, turns: readonly Turn[]): SampleSession {
  const events = turns.map((turn, i): EventInput => {
    const seq = i + 1;
    if (turn[0] === 'call') {
      return {
        seq,
        type: 'tool_call',
        role: 'assistant',
        toolName: turn[1],
        content: '',
        metadata: { arguments: turn[2] },
      };
    }
    if (turn[0] === 'result')
      return { seq, type: 'tool_result', role: 'tool', toolName: turn[1], content: turn[2] };
    return { seq, type: 'message', role: turn[0], content: turn[1] };
  });
  return { agentId, sessionId, events };
}

export const SAMPLE_SESSIONS: readonly SampleSession[] = [
  session('coder', 'payments-retry', [
    [
      'user',
      'The payment service had an outage last night: checkout requests timed out for 12 minutes. Can you find out why?',
    ],
    ['call', 'read_file', { path: 'src/payments/retry.ts' }],
    ['result', 'read_file', 'export const retryDelayMs = 0;'],
    ['assistant', 'retryDelayMs is 0, so every retry hits the payment gateway at once; I will add backoff.'],
    ['call', 'bash', { command: 'pnpm vitest run src/payments' }],
    ['result', 'bash', 'Test Files 1 passed (1)'],
  ]),
  session('assistant', 'calendar', [
    ['user', '帮我把周五下午的产品评审会议改到下周一上午十点。'],
    ['call', 'calendar_update', { event: '产品评审会议', to: '周一 10:00' }],
    ['result', 'calendar_update', '已更新：产品评审会议，周一 10:00–11:00。'],
    ['assistant', '好的，会议已经改到下周一上午十点。'],
  ]),
];

const fact = (agentId: string, content: string): SampleFact => ({ agentId, content });

export const SAMPLE_FACTS: readonly SampleFact[] = [
  fact('coder', 'The team uses pnpm for every package; never run npm install in the repository.'),
  fact('coder', 'The api dev server listens on port 8080.'),
  fact('coder', 'The api dev server listens on port 3000.'),
  fact('coder', 'Tests run with vitest; integration tests need a real SQLite file, no mocks.'),
  fact('assistant', '用户喜欢简洁的回答，先给结论再给细节。'),
  fact('assistant', '用户坐飞机时喜欢靠窗的座位。'),
  fact('assistant', '用户住在北京朝阳区，公司在望京。'),
];
