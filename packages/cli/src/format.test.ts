import { createDiagnosticsCollector, createHealthDto, healthDtoSchema } from '@engram/diagnostics';
import type { RetrievalExecution, RetrievalResult } from '@engram/retrieval';
import type { MemoryRecord, StoreHealth } from '@engram/store';
import { FRESH_MEMORY_FIELDS } from '@engram/test-support';
import { describe, expect, it } from 'vitest';
import {
  cliInvocation,
  displayWidth,
  formatCount,
  formatDiagnostics,
  formatExecution,
  formatExplanation,
  formatHealth,
  formatIntegrity,
  formatMemory,
  formatMs,
  formatResults,
  formatTimestamp,
  MISSING,
  oneLine,
  plural,
  pointerOf,
  renderProgressBar,
  renderTable,
  shellQuote,
} from './format.js';

function record(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id: 'm1',
    agentId: 'coder',
    kind: 'event',
    content: 'Edited src/payments/retry.ts (1 change).',
    contentHash: 'h',
    importance: 0.3,
    confidence: 1,
    tags: ['file:src/payments/retry.ts', 'hash:abc', 'seq:8-8', 'tool:edit_file', 'type:tool_result'],
    sessionId: 'payments-retry',
    seqFrom: 8,
    seqTo: 8,
    ...FRESH_MEMORY_FIELDS,
    ...overrides,
  };
}

const hybrid: RetrievalResult = {
  record: record(),
  score: 0.03289,
  explanation: {
    arms: ['lexical', 'vector'],
    lexicalRank: 1,
    lexicalScore: 4.8912,
    vectorRank: 2,
    similarity: 0.6812,
    rrf: 0.032522,
    relevance: 0.032522,
    importance: 0.3,
    recency: 0.87,
    final: 0.03289,
  },
};

const vectorOnly: RetrievalResult = {
  record: record({
    id: 'm2',
    kind: 'fact',
    content: '用户坐飞机时喜欢靠窗的座位。',
    tags: ['topic:出行'],
    sessionId: null,
    seqFrom: null,
    seqTo: null,
  }),
  score: 0.01676,
  explanation: {
    arms: ['vector'],
    vectorRank: 1,
    similarity: 0.3,
    rrf: 0.016393,
    relevance: 0.016393,
    importance: 0.7,
    recency: 0.99,
    final: 0.01676,
  },
};

const execution: RetrievalExecution = {
  purpose: 'search',
  agentId: 'coder',
  startedAt: 1,
  latencies: {
    keyword: 0.1,
    queryEmbedding: 0.2,
    vector: 0.5,
    authoritativeRevalidation: 0.3,
    assembly: 0.05,
    total: 1.41,
  },
  candidates: { fts: 6, vector: 2, selected: 3 },
  outcome: 'completed',
  degradations: [],
  arms: ['lexical', 'vector'],
};

describe('text measurement', () => {
  it('counts CJK and full-width characters as two columns', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('会议')).toBe(4);
    expect(displayWidth('机票，ok')).toBe(8);
  });

  it('cuts to a column budget with an ellipsis, never splitting a character', () => {
    expect(oneLine('  a\n b  c ', 10)).toBe('a b c');
    expect(oneLine('abcdefghij', 5)).toBe('abcd…');
    const cut = oneLine('下个月十二号去上海出差', 9);
    expect(cut).toBe('下个月十…');
    expect(displayWidth(cut)).toBeLessThanOrEqual(9);
  });
});

describe('numbers', () => {
  it('shows a missing sample as an em dash, never 0 ms', () => {
    expect(formatMs(null)).toBe(MISSING);
    expect(formatMs(undefined)).toBe(MISSING);
    expect(formatMs(Number.NaN)).toBe(MISSING);
    expect(formatMs(0)).toBe('0.00 ms');
    expect(formatMs(1.406)).toBe('1.41 ms');
    expect(formatMs(13.44)).toBe('13.4 ms');
    expect(formatMs(1200)).toBe('1.20 s');
    expect(formatCount(null)).toBe(MISSING);
    expect(formatCount(12345)).toBe('12,345');
    expect(plural(1, 'batch', 'batches')).toBe('1 batch');
    expect(plural(2, 'batch', 'batches')).toBe('2 batches');
  });
});

describe('results', () => {
  it('explains the arms, ranks, scores and fusion terms of a result', () => {
    expect(formatExplanation(hybrid.explanation)).toBe(
      'lexical #1 (score 4.89) · vector #2 (similarity 0.68) · rrf 0.03252 · importance 0.30 · recency 0.87 → 0.03289',
    );
    expect(formatExplanation(vectorOnly.explanation)).toBe(
      'vector #1 (similarity 0.30) · rrf 0.01639 · importance 0.70 · recency 0.99 → 0.01676',
    );
  });

  it('prints rank, score, kind and content, then pointer and tags, then the explanation', () => {
    expect(formatResults([hybrid, vectorOnly], { explain: true, width: 100 }).split('\n')).toEqual([
      '   1. 0.03289  event  Edited src/payments/retry.ts (1 change).',
      '      session/payments-retry#8 · file:src/payments/retry.ts · tool:edit_file',
      '      lexical #1 (score 4.89) · vector #2 (similarity 0.68) · rrf 0.03252 · importance 0.30 · recency 0.87 → 0.03289',
      '   2. 0.01676  fact   用户坐飞机时喜欢靠窗的座位。',
      '      topic:出行',
      '      vector #1 (similarity 0.30) · rrf 0.01639 · importance 0.70 · recency 0.99 → 0.01676',
    ]);
    expect(formatResults([hybrid], { explain: false })).not.toContain('rrf');
    expect(formatResults([], { explain: true })).toBe('    (no results)');
  });

  it('keeps each line within the width', () => {
    const long = { ...hybrid, record: record({ content: '长'.repeat(200) }) };
    for (const line of formatResults([long], { explain: false, width: 60 }).split('\n')) {
      expect(displayWidth(line)).toBeLessThanOrEqual(60);
    }
  });

  it('writes pointers as memory_get expects them', () => {
    expect(pointerOf({ sessionId: 's', seqFrom: 3, seqTo: 5 })).toBe('session/s#3-5');
    expect(pointerOf({ sessionId: 's', seqFrom: 3, seqTo: 3 })).toBe('session/s#3');
    expect(pointerOf({ sessionId: null, seqFrom: null, seqTo: null })).toBeNull();
  });

  it('summarises an execution in one line, naming degradations', () => {
    expect(formatExecution(execution)).toBe(
      'completed · lexical+vector · candidates lexical 6, vector 2, selected 3 · 1.41 ms',
    );
    expect(formatExecution({ ...execution, arms: ['lexical'], degradations: ['vectorCold'] })).toContain(
      'completed · lexical · candidates',
    );
    expect(formatExecution({ ...execution, arms: ['lexical'], degradations: ['vectorCold'] })).toMatch(
      /degraded: vectorCold$/,
    );
  });
});

describe('tables', () => {
  it('aligns columns by display width, numbers to the right', () => {
    expect(
      renderTable(
        ['kind', 'rows'],
        [
          ['event', '44'],
          ['会议', '7'],
        ],
      ),
    ).toBe(['  kind   rows', '  ─────  ────', '  event    44', '  会议      7'].join('\n'));
  });
});

const storeHealth: StoreHealth = {
  totals: { memories: 51, events: 44, facts: 7, skills: 0 },
  byKind: { event: 44, fact: 7, semantic: 0, episodic: 0, reflection: 0, persona: 0, skill: 0 },
  byLifecycle: { active: 51, archived: 0, superseded: 0, conflicted: 0 },
  byEmbeddingState: { pending: 0, ready: 51, error: 0, ftsOnly: 0 },
};

describe('diagnostics and health', () => {
  it('renders an empty snapshot with em dashes for every missing latency and gauge', () => {
    const text = formatDiagnostics(createDiagnosticsCollector({ now: () => 1000 }).snapshot());
    expect(text).not.toMatch(/\b0(\.0+)? ?ms\b/);
    expect(text).toMatch(/search\s+0\s+—\s+—\s+—/);
    expect(text).toContain('embedding backlog      — rows');
  });

  it('renders recorded retrievals with their percentiles and the drain with its transitions', () => {
    const collector = createDiagnosticsCollector({ now: () => 1000 });
    for (const total of [1, 2, 3, 4, 40]) {
      collector.retrievalObserver.onRetrieval({ ...execution, latencies: { ...execution.latencies, total } });
    }
    collector.maintenanceObserver.onDrainBatch?.({
      agentId: 'coder',
      batchSize: 44,
      durationMs: 34,
      transitions: { ready: 44, error: 0, ftsOnly: 0, stale: 0 },
    });
    collector.maintenanceObserver.onEmbeddingBacklog?.({ total: 0, activeAgents: 0 });
    const text = formatDiagnostics(collector.snapshot());
    expect(text).toMatch(/search\s+5\s+3\.00 ms\s+40\.0 ms\s+40\.0 ms\s+completed 5/);
    expect(text).toContain('Embedding drain   1 batch, 44 rows · ready 44, error 0, ftsOnly 0, stale 0');
    expect(text).toContain('embedding backlog      0 rows (0 agents)');
  });

  it('prints the health table: totals, counts side by side, runtime labelled as this process', () => {
    const dto = createHealthDto(storeHealth, createDiagnosticsCollector({ now: () => 1 }).snapshot());
    expect(healthDtoSchema.safeParse(dto).success).toBe(true);
    const text = formatHealth(dto, 'all agents');
    expect(text).toContain('Store (all agents)');
    expect(text).toContain('memories 51 · events 44 · facts 7 · skills 0');
    expect(text).toMatch(/event\s+44\s+active\s+51\s+pending\s+0/);
    expect(text).toContain('Runtime diagnostics (this process only)');
  });

  it('lists every live process using the file and labels the runtime as their totals', () => {
    const own = createDiagnosticsCollector({ now: () => 1 }).snapshot();
    const other = createDiagnosticsCollector({ now: () => 1 });
    other.retrievalObserver.onRetrieval({
      purpose: 'search',
      agentId: 'coder',
      startedAt: 1,
      latencies: { keyword: 1, total: 12.5 },
      candidates: { fts: 1, vector: 0, selected: 1 },
      outcome: 'completed',
      degradations: ['vectorCold'],
      arms: ['lexical'],
    });
    const dto = createHealthDto(storeHealth, own, {
      list: [
        { id: 'a'.repeat(32), self: true, startedAt: 0, beatAt: 1_000, runtime: own },
        { id: '3f9c'.repeat(8), self: false, startedAt: 0, beatAt: 2_000, runtime: other.snapshot() },
      ],
      skipped: 1,
    });
    expect(healthDtoSchema.safeParse(dto).success).toBe(true);
    const text = formatHealth(dto, 'all agents');
    expect(text).toContain('Runtime diagnostics (totals of 2 live processes using the file)');
    expect(text).toContain('Processes (2 live processes using the file)');
    expect(text).toMatch(
      /aaaaaaaa \(this\)\s+1970-01-01T00:00:00\.000Z\s+1970-01-01T00:00:01\.000Z\s+0\s+—\s+0/,
    );
    expect(text).toMatch(
      /3f9c3f9c\s+1970-01-01T00:00:00\.000Z\s+1970-01-01T00:00:02\.000Z\s+1\s+12\.5 ms\s+1/,
    );
    expect(text).toContain('1 published row could not be read');
    expect(text).not.toContain('3f9c'.repeat(8));
  });
});

describe('integrity line', () => {
  it('says ok or FAILED with when the check ran, or that it did not run', () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5);
    expect(formatIntegrity({ state: 'ok', checkedAt: at })).toBe(
      '  integrity ok (checked 2026-01-02T03:04:05.000Z)',
    );
    expect(formatIntegrity({ state: 'failed', checkedAt: at })).toBe(
      '  integrity FAILED (checked 2026-01-02T03:04:05.000Z): writes are refused',
    );
    expect(formatIntegrity({ state: 'failed', checkedAt: at, badRows: 2, damagedVectorChunks: 1 })).toBe(
      '  integrity FAILED (checked 2026-01-02T03:04:05.000Z): 2 rows no reader can use, 1 damaged vector chunk;' +
        ' writes stay allowed (forget or restore those rows; a write repairs the chunks)',
    );
    expect(formatIntegrity({ state: 'notChecked', checkedAt: null })).toBe('  integrity not checked');
    expect(formatIntegrity(undefined)).toBe('  integrity not checked');
  });
});

describe('progress bar', () => {
  it('fills in proportion and shows the percentage and counts', () => {
    expect(renderProgressBar(0, 10, 10)).toBe('[░░░░░░░░░░]   0%  0/10');
    expect(renderProgressBar(5, 10, 10, 'embedding')).toBe('[█████░░░░░]  50%  5/10 embedding');
    expect(renderProgressBar(10, 10, 10)).toBe('[██████████] 100%  10/10');
    expect(renderProgressBar(0, 0, 4)).toBe('[████] 100%  0/0');
  });
});

describe('follow-up commands the user can paste', () => {
  it('quotes only arguments a POSIX shell would split or expand', () => {
    expect(shellQuote('/tmp/x/.engram/demo.db')).toBe('/tmp/x/.engram/demo.db');
    expect(shellQuote('roll back the deploy')).toBe("'roll back the deploy'");
    expect(shellQuote('/home/me/my project/.engram/demo.db')).toBe("'/home/me/my project/.engram/demo.db'");
    expect(shellQuote("it's $HOME")).toBe("'it'\\''s $HOME'");
  });

  it('names the command that works in the shell the demo was started from', () => {
    const fromScript = { npm_lifecycle_event: 'demo' };
    expect(
      cliInvocation({ env: { ...fromScript, npm_config_user_agent: 'pnpm/10.34.8 npm/? node/v20.20.2' } }),
    ).toBe('pnpm -s engram');
    expect(cliInvocation({ env: { ...fromScript, npm_config_user_agent: 'npm/10.8.2 node/v20.20.2' } })).toBe(
      'npm run -s engram --',
    );
    expect(cliInvocation({ env: {}, entry: '/usr/local/bin/engram' })).toBe('engram');
    expect(cliInvocation({ env: {}, entry: 'C:\\npm\\engram.cmd' })).toBe('engram');
    expect(cliInvocation({ env: {}, entry: '/repo/packages/cli/dist/cli.js' })).toBe(
      'node /repo/packages/cli/dist/cli.js',
    );
    expect(cliInvocation({ env: { npm_lifecycle_event: 'test' }, entry: '/a b/cli.js' })).toBe(
      "node '/a b/cli.js'",
    );
  });
});

describe('timestamps', () => {
  it('renders a memory whose timestamps no Date can hold with a typed placeholder instead of a RangeError', () => {
    const text = formatMemory(record({ createdAt: 8_640_000_000_000_001, updatedAt: 1.5 }));
    expect(text).toContain('created     (invalid timestamp: outOfRange)');
    expect(text).toContain('updated     (invalid timestamp: notInteger)');
    expect(text).toContain('Edited src/payments/retry.ts (1 change).');
    expect(formatTimestamp(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(formatTimestamp(8.64e15)).toBe('+275760-09-13T00:00:00.000Z');
  });
});
