import { describe, expect, it } from 'vitest';
import { fieldText, href, userText } from './html.js';

describe('stored text in a page', () => {
  it('cannot open markup, and bidi and control characters become visible markers', () => {
    const html = userText('<a href="x">hi</a> \u202Eevil\u2066 \u0000 \u0085 \u2028 ok');
    expect(html).not.toMatch(/<a |\u202E|\u2066|\u0000|\u0085|\u2028/);
    expect(html).toContain('&lt;a href=&quot;x&quot;&gt;hi&lt;/a&gt;');
    for (const code of ['U+202E', 'U+2066', 'U+0000', 'U+0085', 'U+2028'])
      expect(html).toContain(`>${code}<`);
    expect(html.startsWith('<bdi class="ut">')).toBe(true);
  });

  it('keeps line breaks, tabs and astral characters; replaces lone surrogates', () => {
    expect(userText('a\n\tb 😀')).toBe('<bdi class="ut">a\n\tb 😀</bdi>');
    expect(userText('x\ud800y\udc00')).toBe('<bdi class="ut">x\ufffdy\ufffd</bdi>');
  });

  it('drops bidi controls from form values and escapes them', () => {
    expect(fieldText('"a"\u202E<b>')).toBe('&quot;a&quot;&lt;b&gt;');
  });

  it('builds links whose parameters cannot break out of the attribute', () => {
    expect(href('memory', { id: '"><script>', agent: 'a&b', user: null })).toBe(
      './memory?id=%22%3E%3Cscript%3E&amp;agent=a%26b',
    );
  });
});
