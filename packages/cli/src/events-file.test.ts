import { describe, expect, it } from 'vitest';
import { isEngramCliError } from './errors.js';
import { parseEventsJsonl, parseLocatedEvents } from './events-file.js';

const defaults = { agentId: 'coder', sessionId: null } as const;

function failureOf(text: string, d: { agentId: string; sessionId: string | null } = defaults): string {
  try {
    parseEventsJsonl(text, d);
  } catch (error) {
    expect(isEngramCliError(error)).toBe(true);
    expect((error as { code: string }).code).toBe('ENGRAM_CLI_INVALID_EVENTS');
    return (error as Error).message;
  }
  throw new Error('expected a failure');
}

describe('parseEventsJsonl', () => {
  it('groups events by agent and session, in first-appearance order, sorted by seq, skipping blank lines', () => {
    const text = [
      '{"sessionId":"s1","seq":2,"type":"tool_call","role":"assistant","content":"","toolName":"read_file","metadata":{"path":"src/a.ts"}}',
      '',
      '{"sessionId":"s1","seq":1,"type":"message","role":"user","content":"open src/a.ts"}',
      '{"agentId":"assistant","sessionId":"s9","seq":1,"type":"message","role":"user","content":"会议改到周一","createdAt":1700000000000}',
      '   ',
    ].join('\r\n');
    expect(parseEventsJsonl(text, defaults)).toEqual([
      {
        agentId: 'coder',
        sessionId: 's1',
        events: [
          { seq: 1, type: 'message', role: 'user', content: 'open src/a.ts' },
          {
            seq: 2,
            type: 'tool_call',
            role: 'assistant',
            content: '',
            toolName: 'read_file',
            metadata: { path: 'src/a.ts' },
          },
        ],
      },
      {
        agentId: 'assistant',
        sessionId: 's9',
        events: [
          { seq: 1, type: 'message', role: 'user', content: '会议改到周一', createdAt: 1700000000000 },
        ],
      },
    ]);
  });

  it('takes the session from --session when a line has none', () => {
    const [session] = parseEventsJsonl('{"seq":1,"type":"message","role":"user","content":"hi"}', {
      agentId: 'a',
      sessionId: 'cli-session',
    });
    expect(session).toMatchObject({ agentId: 'a', sessionId: 'cli-session' });
  });

  it('names the line and the field, and never echoes the content', () => {
    const secret = 'sk-THIS-IS-A-SECRET';
    expect(
      failureOf(`{"sessionId":"s","seq":1,"type":"message","role":"user","content":"ok"}\n{"oops ${secret}`),
    ).toBe('events file line 2: not valid JSON');
    expect(failureOf(`{"sessionId":"s","seq":0,"type":"message","role":"user","content":"${secret}"}`)).toBe(
      'events file line 1: "seq" must be a positive integer',
    );
    expect(failureOf(`{"sessionId":"s","seq":1,"type":"chat","role":"user","content":"${secret}"}`)).toBe(
      'events file line 1: "type" must be message, tool_call or tool_result',
    );
    expect(failureOf('{"sessionId":"s","seq":1,"type":"message","role":"user"}')).toBe(
      'events file line 1: "content" is required',
    );
    expect(
      failureOf(`{"sessionId":"s","seq":1,"type":"message","role":"user","content":"x","extra":"${secret}"}`),
    ).toBe('events file line 1: unknown field "extra"');
    expect(failureOf('[1,2]')).toBe('events file line 1: must be a JSON object');
    expect(failureOf('{"seq":1,"type":"message","role":"user","content":"x"}')).toBe(
      'events file line 1: "sessionId" is required (or pass --session)',
    );
    expect(
      failureOf(
        '{"sessionId":"s","seq":3,"type":"message","role":"user","content":"a"}\n{"sessionId":"s","seq":3,"type":"message","role":"user","content":"b"}',
      ),
    ).toBe('events file line 2: "seq" 3 repeats within its session');
  });

  it("checks agent and session ids by the store's rule, so a bad id names its line instead of failing the store", () => {
    const line = (ids: string): string => `{${ids}"seq":1,"type":"message","role":"user","content":"x"}`;
    expect(failureOf(line('"sessionId":"s","agentId":"a\\u001bb",'))).toBe(
      'events file line 1: "agentId" is invalid',
    );
    expect(failureOf(line('"sessionId":"s\\ud800",'))).toBe('events file line 1: "sessionId" is invalid');
    expect(failureOf(line('"sessionId":"   ",'))).toBe('events file line 1: "sessionId" is invalid');
    const long = 's'.repeat(256);
    const [session] = parseEventsJsonl(line(`"sessionId":"${long}",`), { agentId: 'a', sessionId: null });
    expect(session?.sessionId).toBe(long);
  });
});

describe('parseEventsJsonl with an agent chosen for the file (ingest --agent)', () => {
  const line = (extra: object) =>
    JSON.stringify({
      sessionId: 's1',
      seq: 1,
      type: 'message',
      role: 'user',
      content: 'the secret',
      ...extra,
    });

  it('refuses a line naming another agent, with its number and never its content', () => {
    const text = `${line({})}\n${line({ seq: 2, agentId: 'victim' })}`;
    let caught: unknown;
    try {
      parseEventsJsonl(text, { agentId: 'coder', sessionId: null, agentFixed: true });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'ENGRAM_CLI_AGENT_MISMATCH' });
    expect((caught as Error).message).toContain('events file line 2');
    expect((caught as Error).message).not.toContain('secret');
  });

  it('accepts lines naming the chosen agent, and lines of other agents when none was chosen', () => {
    const text = `${line({ agentId: 'coder' })}\n${line({ seq: 2 })}`;
    expect(parseEventsJsonl(text, { agentId: 'coder', sessionId: null, agentFixed: true })).toHaveLength(1);
    const mixed = `${line({})}\n${line({ agentId: 'victim' })}`;
    expect(parseEventsJsonl(mixed, defaults).map((s) => s.agentId)).toEqual(['coder', 'victim']);
  });
});

describe('parseEventsJsonl, misleading errors', () => {
  const line = (extra: string): string =>
    `{"sessionId":"s1","seq":1,"type":"message","role":"user","content":"x"${extra}}`;

  it('says what is wrong with a seq of 1.5 or "1" (not that it is missing)', () => {
    for (const seq of ['1.5', '"1"', '0', 'null']) {
      expect(failureOf(`{"sessionId":"s1","seq":${seq},"type":"message","role":"user","content":"x"}`)).toBe(
        'events file line 1: "seq" must be a positive integer',
      );
    }
    expect(failureOf('{"sessionId":"s1","type":"message","role":"user","content":"x"}')).toBe(
      'events file line 1: "seq" is required',
    );
  });

  it('names schema_version and the supported version, and accepts version 1', () => {
    expect(failureOf(line(',"schema_version":0'))).toBe(
      'events file line 1: "schema_version" must be 1 (the only events-file version this CLI reads)',
    );
    expect(parseEventsJsonl(line(',"schema_version":1'), defaults)[0]?.events).toHaveLength(1);
  });

  it('accepts a UTF-8 byte order mark at the start of the file', () => {
    const sessions = parseEventsJsonl(
      `\ufeff${line('')}\n${line('').replace('"seq":1', '"seq":2')}`,
      defaults,
    );
    expect(sessions[0]?.events.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('refuses a createdAt outside the range of a Date, naming the range', () => {
    for (const ms of ['8640000000000001', '1e300', '-1', '1.5', '"2024-01-01"']) {
      expect(failureOf(line(`,"createdAt":${ms}`))).toBe(
        'events file line 1: "createdAt" must be epoch milliseconds (an integer from 0 to 8640000000000000)',
      );
    }
    expect(parseEventsJsonl(line(',"createdAt":8640000000000000'), defaults)[0]?.events[0]?.createdAt).toBe(
      8.64e15,
    );
  });

  it('refuses agent and session ids that are not in normal form (trailing space, NFD)', () => {
    expect(failureOf(line(',"agentId":"alice "'))).toBe('events file line 1: "agentId" is invalid');
    expect(failureOf(line('').replace('"s1"', '"e\\u0301"'))).toBe(
      'events file line 1: "sessionId" is invalid',
    );
  });

  it('keeps the file line of every event for later refusals', () => {
    const text = ['', line('').replace('"seq":1', '"seq":2'), '', line('')].join('\n');
    expect(parseLocatedEvents(text, defaults)[0]?.lines).toEqual([4, 2]);
  });
});
