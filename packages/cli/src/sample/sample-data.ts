/**
 * The demo's bundled sample: two agents (a coding agent working in English, a personal assistant working in
 * Simplified Chinese), several sessions of messages, tool calls on files and tool results, a few facts to
 * remember, and the example searches the demo runs. Plain data, compiled into `dist/` with the app.
 */
import type { EventInput } from '@engram/memory/compose';

/** One session of the sample. */
export interface SampleSession {
  readonly agentId: string;
  readonly sessionId: string;
  /** How many days before the first run the session took place (its events' `createdAt`). */
  readonly daysAgo: number;
  readonly events: readonly EventInput[];
}

/** One fact the demo remembers through the `memory_remember` tool. */
export interface SampleFact {
  readonly agentId: string;
  readonly content: string;
  readonly topic: string;
}

/** One example search of the demo. */
export interface SampleSearch {
  readonly agentId: string;
  readonly query: string;
  /** What the query shows, e.g. "file path". */
  readonly shows: string;
}

/** Agent id of the English coding agent. */
export const CODER_AGENT = 'coder';
/** Agent id of the Chinese assistant agent. */
export const ASSISTANT_AGENT = 'assistant';

const msg = (seq: number, role: 'user' | 'assistant', content: string): EventInput => ({
  seq,
  type: 'message',
  role,
  content,
});

const call = (seq: number, toolName: string, args: Readonly<Record<string, unknown>>): EventInput => ({
  seq,
  type: 'tool_call',
  role: 'assistant',
  toolName,
  content: '',
  metadata: { arguments: args },
});

const result = (
  seq: number,
  toolName: string,
  content: string,
  metadata?: Readonly<Record<string, unknown>>,
): EventInput => ({
  seq,
  type: 'tool_result',
  role: 'tool',
  toolName,
  content,
  ...(metadata === undefined ? {} : { metadata }),
});

/** The sample sessions, oldest first. */
export const SAMPLE_SESSIONS: readonly SampleSession[] = [
  {
    agentId: CODER_AGENT,
    sessionId: 'payments-retry',
    daysAgo: 6,
    events: [
      msg(
        1,
        'user',
        'The payment service had an outage last night: checkout requests timed out for 12 minutes. Can you find out why?',
      ),
      call(2, 'read_file', { path: 'src/payments/retry.ts' }),
      result(
        3,
        'read_file',
        'export const retryDelayMs = 0;\nexport async function chargeWithRetry(client: PaymentClient, order: Order) {\n  for (let attempt = 0; attempt < 10; attempt++) { … }\n}',
        { path: 'src/payments/retry.ts' },
      ),
      call(4, 'bash', { command: 'grep -rn "retryDelayMs" src/' }),
      result(
        5,
        'bash',
        'src/payments/retry.ts:1:export const retryDelayMs = 0;\nsrc/payments/client.ts:14:  await sleep(retryDelayMs);',
      ),
      msg(
        6,
        'assistant',
        'Found it: retryDelayMs is 0, so chargeWithRetry hammers the payment gateway with 10 immediate retries and the gateway rate-limits us. I will add exponential backoff.',
      ),
      call(7, 'edit_file', {
        path: 'src/payments/retry.ts',
        old: 'export const retryDelayMs = 0;',
        new: 'export const retryDelayMs = 200; // doubled per attempt, capped at 5 s',
      }),
      result(8, 'edit_file', 'Edited src/payments/retry.ts (1 change).', { path: 'src/payments/retry.ts' }),
      call(9, 'bash', { command: 'pnpm vitest run src/payments' }),
      result(10, 'bash', '✓ src/payments/retry.test.ts (6 tests) 41ms\nTest Files 1 passed (1)'),
      msg(11, 'user', 'Great. Write a short incident note for the postmortem.'),
      msg(
        12,
        'assistant',
        'Incident note: checkout was unavailable for 12 minutes because chargeWithRetry retried without delay and tripped the gateway rate limit. Fix: exponential backoff from 200 ms in src/payments/retry.ts.',
      ),
    ],
  },
  {
    agentId: CODER_AGENT,
    sessionId: 'sessions-migration',
    daysAgo: 4,
    events: [
      msg(1, 'user', 'Add a database migration that creates the sessions table with an expires_at index.'),
      call(2, 'read_file', { path: 'src/store/sqlite-store.ts' }),
      result(
        3,
        'read_file',
        'export class SqliteStore {\n  migrate(): void { for (const m of MIGRATIONS) this.db.exec(m.sql); }\n}',
        {
          path: 'src/store/sqlite-store.ts',
        },
      ),
      call(4, 'edit_file', {
        path: 'src/store/migrations/004_sessions.sql',
        new: 'CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL);\nCREATE INDEX sessions_expires_at ON sessions(expires_at);',
      }),
      result(5, 'edit_file', 'Created src/store/migrations/004_sessions.sql.', {
        path: 'src/store/migrations/004_sessions.sql',
      }),
      call(6, 'bash', { command: 'pnpm test -- src/store' }),
      result(
        7,
        'bash',
        '✓ src/store/migrations.test.ts (3 tests)\n✓ src/store/sqlite-store.test.ts (12 tests)',
      ),
      msg(
        8,
        'assistant',
        'The migration 004_sessions.sql creates the sessions table and the expires_at index; the store tests pass.',
      ),
    ],
  },
  {
    agentId: CODER_AGENT,
    sessionId: 'deploy-rollback',
    daysAgo: 2,
    events: [
      msg(1, 'user', 'The api deployment is failing health checks after the release. Roll it back.'),
      call(2, 'bash', { command: 'kubectl rollout undo deployment/api' }),
      result(3, 'bash', 'deployment.apps/api rolled back'),
      call(4, 'read_file', { path: 'deploy/api.yaml' }),
      result(
        5,
        'read_file',
        'readinessProbe:\n  httpGet: { path: /healthz, port: 8080 }\n  initialDelaySeconds: 2',
        { path: 'deploy/api.yaml' },
      ),
      msg(
        6,
        'assistant',
        'Rolled back. The readinessProbe starts after 2 s but the api needs about 9 s to warm its cache, so new pods never became ready. I suggest initialDelaySeconds: 15 in deploy/api.yaml.',
      ),
    ],
  },
  {
    agentId: ASSISTANT_AGENT,
    sessionId: 'calendar',
    daysAgo: 5,
    events: [
      msg(1, 'user', '帮我把周五下午的产品评审会议改到下周一上午十点。'),
      call(2, 'calendar_update', { event: '产品评审会议', from: '周五 15:00', to: '周一 10:00' }),
      result(3, 'calendar_update', '已更新：产品评审会议，周一 10:00–11:00，会议室 A。'),
      msg(4, 'assistant', '好的，会议已经改到下周一上午十点，并通知了所有参会人。'),
      msg(5, 'user', '另外，以后开会前一天提醒我准备材料。'),
      msg(6, 'assistant', '没问题，每次会议前一天下午我都会提醒你准备材料。'),
    ],
  },
  {
    agentId: ASSISTANT_AGENT,
    sessionId: 'shanghai-trip',
    daysAgo: 3,
    events: [
      msg(1, 'user', '下个月十二号去上海出差，帮我处理机票预订和酒店。'),
      call(2, 'search_flights', { from: '北京', to: '上海', date: '6月12日' }),
      result(3, 'search_flights', '找到 3 个航班：CA1501 08:00，MU5102 09:30，HO1252 13:00。'),
      msg(
        4,
        'assistant',
        '机票预订已完成：6月12日 CA1501 北京首都→上海虹桥，靠窗座位。酒店订在静安区，离客户办公室步行十分钟。',
      ),
      call(5, 'write_file', {
        path: 'notes/上海出差.md',
        content: '行程：6月12日—14日；航班 CA1501；酒店：静安区',
      }),
      result(6, 'write_file', '已保存 notes/上海出差.md。', { path: 'notes/上海出差.md' }),
    ],
  },
  {
    agentId: ASSISTANT_AGENT,
    sessionId: 'photo-backup',
    daysAgo: 1,
    events: [
      msg(1, 'user', '提醒我每周日晚上备份手机照片和工作文档。'),
      msg(2, 'assistant', '好的，已设置每周日晚上九点的提醒：备份手机照片和工作文档到家里的 NAS。'),
      msg(3, 'user', '上次备份失败了，是不是硬盘满了？'),
      call(4, 'bash', { command: 'df -h /volume1' }),
      result(5, 'bash', '/dev/md2  3.6T  3.5T  98G  98% /volume1'),
      msg(
        6,
        'assistant',
        '是的，NAS 的硬盘已经用了 98%，所以备份失败。建议清理旧的视频文件，或者换一块更大的硬盘。',
      ),
    ],
  },
];

/** Facts the demo remembers (a near pair that differs in a number stays two facts). */
export const SAMPLE_FACTS: readonly SampleFact[] = [
  {
    agentId: CODER_AGENT,
    content: 'The team uses pnpm for every package; never run npm install in the repository.',
    topic: 'tooling',
  },
  { agentId: CODER_AGENT, content: 'The api dev server listens on port 8080.', topic: 'environment' },
  { agentId: CODER_AGENT, content: 'The api dev server listens on port 3000.', topic: 'environment' },
  {
    agentId: CODER_AGENT,
    content: 'Tests run with vitest; integration tests need a real SQLite file, no mocks.',
    topic: 'convention',
  },
  { agentId: ASSISTANT_AGENT, content: '用户喜欢简洁的回答，先给结论再给细节。', topic: '偏好' },
  { agentId: ASSISTANT_AGENT, content: '用户坐飞机时喜欢靠窗的座位。', topic: '出行' },
  { agentId: ASSISTANT_AGENT, content: '用户住在北京朝阳区，公司在望京。', topic: '环境' },
];

/**
 * The example searches: an English word, a file path, a code identifier, two paraphrases, Chinese of 2 and 4
 * characters. The paraphrases need a semantic embedder (the default USE-lite): "the site went down" shares no
 * word with the outage report it finds. USE-lite is English-only, so the Chinese ones are found lexically.
 */
export const SAMPLE_SEARCHES: readonly SampleSearch[] = [
  { agentId: CODER_AGENT, query: 'migration', shows: 'English word' },
  { agentId: CODER_AGENT, query: 'src/payments/retry.ts', shows: 'file path' },
  { agentId: CODER_AGENT, query: 'retryDelayMs', shows: 'code identifier' },
  { agentId: CODER_AGENT, query: 'package manager', shows: 'paraphrase (finds the pnpm fact)' },
  {
    agentId: CODER_AGENT,
    query: 'the site went down',
    shows: 'paraphrase, no word in common (finds the "outage" by meaning alone)',
  },
  {
    agentId: ASSISTANT_AGENT,
    query: '会议',
    shows: 'Chinese, 2 characters (lexical; USE-lite is English-only)',
  },
  { agentId: ASSISTANT_AGENT, query: '机票预订', shows: 'Chinese, 4 characters (lexical)' },
];

/** The search the demo suggests the user run next (it finds the deploy-rollback session by both arms). */
export const SAMPLE_NEXT_SEARCH: SampleSearch = {
  agentId: CODER_AGENT,
  query: 'roll back the deploy',
  shows: 'a question in plain words',
};
