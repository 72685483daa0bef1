import { createHash } from 'node:crypto';
import { contentHash, isValidTag, MAX_TAGS, normalizeContent } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { deriveEventTags, eventMemoryContent, filePathsOf, renderToolCall, toolArguments } from './tags.js';

const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

describe('normalizeContent / contentHash', () => {
  it('normalises NFKC, lower-case, collapsed whitespace, trimmed', () => {
    expect(normalizeContent('  Ｈello\t\n  World  ')).toBe('hello world');
    expect(contentHash('Hello   WORLD')).toBe(sha('hello world'));
    expect(contentHash('x\uD800y')).toBe(sha('x\uFFFDy'));
  });
});

describe('toolArguments and file paths', () => {
  it('reads arguments from arguments/args/input/params, objects or JSON strings, else the metadata', () => {
    expect(toolArguments({ arguments: { path: 'a.ts' } })).toEqual({ path: 'a.ts' });
    expect(toolArguments({ args: '{"file_path":"b.ts"}' })).toEqual({ file_path: 'b.ts' });
    expect(toolArguments({ input: { filePath: 'c.ts' } })).toEqual({ filePath: 'c.ts' });
    expect(toolArguments({ path: 'd.ts' })).toEqual({ path: 'd.ts' });
    expect(toolArguments({ args: 'not json', path: 'e.ts' })).toEqual({ args: 'not json', path: 'e.ts' });
  });

  it('collects path, file_path, filePath and paths[] in order, trimmed and unique', () => {
    expect(
      filePathsOf({
        path: ' src/a.ts ',
        file_path: 'src/b.ts',
        filePath: 'src/a.ts',
        paths: ['x', 3, 'src/b.ts'],
      }),
    ).toEqual(['src/a.ts', 'src/b.ts', 'x']);
    expect(filePathsOf({ paths: 'not-an-array', path: '' })).toEqual([]);
  });
});

describe('renderToolCall / eventMemoryContent', () => {
  it('renders a tool call as `tool <name> <args json>`', () => {
    const call = {
      type: 'tool_call' as const,
      toolName: 'read_file',
      content: '',
      metadata: { arguments: { path: 'src/a.ts' } },
    };
    expect(renderToolCall(call)).toBe('tool read_file {"path":"src/a.ts"}');
    expect(eventMemoryContent(call)).toBe('tool read_file {"path":"src/a.ts"}');
    expect(renderToolCall({ toolName: 'bash', content: 'ls -la', metadata: {} })).toBe('tool bash ls -la');
    expect(renderToolCall({ toolName: null, content: '', metadata: {} })).toBe('tool unknown');
  });

  it('keeps the content of messages and tool results', () => {
    expect(eventMemoryContent({ type: 'message', toolName: null, content: 'hi', metadata: {} })).toBe('hi');
    expect(
      eventMemoryContent({ type: 'tool_result', toolName: 'bash', content: 'ok', metadata: { path: 'x' } }),
    ).toBe('ok');
  });
});

describe('deriveEventTags', () => {
  it('derives exactly tool, file, type, hash and seq tags, sorted', () => {
    const event = {
      type: 'tool_call' as const,
      toolName: 'edit_file',
      metadata: { arguments: { file_path: 'src/app.ts', paths: ['README.md'] } },
    };
    const content = renderToolCall({ ...event, content: '' });
    expect(deriveEventTags(event, content, 7, 7)).toEqual(
      [
        'file:README.md',
        'file:src/app.ts',
        `hash:${sha(normalizeContent(content))}`,
        'seq:7-7',
        'tool:edit_file',
        'type:tool_call',
      ].sort(),
    );
  });

  it('has no tool or file tags for a plain message', () => {
    expect(deriveEventTags({ type: 'message', toolName: null, metadata: {} }, 'Hello', 1, 3)).toEqual([
      `hash:${sha('hello')}`,
      'seq:1-3',
      'type:message',
    ]);
  });

  it("names a message's role, so recall can say who said it", () => {
    expect(
      deriveEventTags({ type: 'message', role: 'user', toolName: null, metadata: {} }, 'Hello', 1, 1),
    ).toEqual([`hash:${sha('hello')}`, 'role:user', 'seq:1-1', 'type:message']);
    expect(
      deriveEventTags({ type: 'tool_result', role: 'tool', toolName: 'web', metadata: {} }, 'x', 2, 2),
    ).not.toContain('role:tool');
  });

  it('drops tags the store would reject instead of failing', () => {
    const long = `src/${'a'.repeat(600)}.ts`;
    const tags = deriveEventTags(
      {
        type: 'tool_call',
        toolName: 'bad\u0007tool',
        metadata: { path: long, file_path: 'ok\u0000.ts', filePath: 'fine.ts' },
      },
      'x',
      2,
      2,
    );
    expect(tags).toEqual(['file:fine.ts', `hash:${sha('x')}`, 'seq:2-2', 'type:tool_call']);
  });

  it('caps the number of tags, dropping file tags first', () => {
    const paths = Array.from({ length: 100 }, (_, i) => `f${String(i).padStart(3, '0')}.ts`);
    const tags = deriveEventTags({ type: 'tool_call', toolName: 'grep', metadata: { paths } }, 'x', 1, 1);
    expect(tags).toHaveLength(MAX_TAGS);
    expect(tags).toContain('tool:grep');
    expect(tags).toContain('seq:1-1');
    expect(tags.filter((t) => t.startsWith('file:'))).toHaveLength(MAX_TAGS - 4);
  });
});

describe('isValidTag', () => {
  it("mirrors the store's tag rule", () => {
    expect(isValidTag('file:src/a.ts')).toBe(true);
    expect(isValidTag('file:path with spaces.ts')).toBe(true);
    expect(isValidTag(`a:${'x'.repeat(512)}`)).toBe(true);
    expect(isValidTag(`a:${'x'.repeat(513)}`)).toBe(false);
    expect(isValidTag('File:x')).toBe(false);
    expect(isValidTag(`${'a'.repeat(33)}:x`)).toBe(false);
    expect(isValidTag(':x')).toBe(false);
    expect(isValidTag('file:')).toBe(false);
    expect(isValidTag('file:a\nb')).toBe(false);
    expect(isValidTag('file:a\uD800')).toBe(false);
    expect(isValidTag('nocolon')).toBe(false);
  });
});
