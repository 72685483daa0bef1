/** Where the memory goes in a prompt and what is recorded of it. */
import { describe, expect, it } from 'vitest';
import {
  conversationOf,
  latestUserText,
  type Prompt,
  replyOf,
  type StreamPart,
  streamedReply,
  withMemory,
} from './prompt.js';

const prompt: Prompt = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: [{ type: 'text', text: 'first question' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'first answer' }] },
  { role: 'user', content: [{ type: 'text', text: 'second question' }] },
];

describe('withMemory', () => {
  it('puts the core block first and the recall block in front of the latest user text, nothing else moved', () => {
    const out = withMemory(prompt, '# Core\n- fact', '# Recall\n- memory');
    expect(out[0]).toEqual({ role: 'system', content: '# Core\n- fact' });
    expect(out.slice(1, 4)).toEqual(prompt.slice(0, 3));
    expect(out[4]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: '# Recall\n- memory' },
        { type: 'text', text: 'second question' },
      ],
    });
    expect(withMemory(prompt, '', '')).toEqual(prompt);
  });
});

describe('what is recorded', () => {
  it('keeps user and assistant text, never the system prompt', () => {
    expect(latestUserText(prompt)).toBe('second question');
    expect(conversationOf(prompt)).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
    ]);
    expect(
      replyOf([
        { type: 'text', text: 'Let me check.' },
        { type: 'text', text: 'One moment.' },
        { type: 'tool-call', toolCallId: 'c', toolName: 'memory_search', input: '{ "query": "x" }' },
      ]),
    ).toEqual([
      { role: 'assistant', content: 'Let me check.\nOne moment.' },
      { role: 'assistant', type: 'tool_call', toolName: 'memory_search', id: 'c', content: '{"query":"x"}' },
    ]);
    expect(replyOf([])).toEqual([]);
  });

  it('records tool calls and results as entries of their own, keyed by the call id, spelt as the reply spelt them', () => {
    const withTools: Prompt = [
      { role: 'user', content: [{ type: 'text', text: 'what is in a.txt?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading it.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a.txt' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'read',
            output: { type: 'text', value: 'hello' },
          },
        ],
      },
    ];
    expect(conversationOf(withTools)).toEqual([
      { role: 'user', content: 'what is in a.txt?' },
      { role: 'assistant', content: 'Reading it.' },
      { role: 'assistant', type: 'tool_call', toolName: 'read', id: 'c1', content: '{"path":"a.txt"}' },
      { role: 'tool', type: 'tool_result', toolName: 'read', id: 'c1', content: 'hello' },
    ]);
    // The reply that made the call spelt its arguments as a string: the same entry.
    expect(
      replyOf([
        { type: 'text', text: 'Reading it.' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: '{"path": "a.txt"}' },
      ]),
    ).toEqual(conversationOf(withTools).slice(1, 3));
  });

  it('records a streamed answer as the next step will send it back: one text part per text block', () => {
    const reply = streamedReply();
    const parts: StreamPart[] = [
      { type: 'text-start', id: 'a' },
      { type: 'text-delta', id: 'a', delta: 'Deploys ' },
      { type: 'text-delta', id: 'a', delta: 'run at noon.' },
      { type: 'text-end', id: 'a' },
      { type: 'text-start', id: 'b' },
      { type: 'text-delta', id: 'b', delta: 'Anything else?' },
      { type: 'text-end', id: 'b' },
      { type: 'tool-call', toolCallId: 'c', toolName: 'memory_search', input: '{"query":"noon"}' },
    ];
    for (const part of parts) reply.add(part);
    expect(reply.done()).toEqual(
      conversationOf([
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Deploys run at noon.' },
            { type: 'text', text: 'Anything else?' },
            { type: 'tool-call', toolCallId: 'c', toolName: 'memory_search', input: { query: 'noon' } },
          ],
        },
      ]),
    );
  });
});
