import { describe, expect, it } from 'vitest';
import { redactConnectionUrl, redactConnectionUrls } from './connection-url.js';

describe('redactConnectionUrl', () => {
  it('hides the password of a URL, in its authority or as a parameter, and keeps the rest', () => {
    expect(redactConnectionUrl('postgres://user:secret@127.0.0.1:5432/x')).toBe(
      'postgres://user:***@127.0.0.1:5432/x',
    );
    expect(redactConnectionUrl('postgresql://u@h/db?password=secret&sslmode=require')).toBe(
      'postgresql://u@h/db?password=***&sslmode=require',
    );
    expect(redactConnectionUrl('postgres://u:p%40ss@h/db')).not.toContain('p%40ss');
  });

  it('returns a file path or a URL without a password as given, and an unparsable URL as its scheme', () => {
    expect(redactConnectionUrl('/home/me/.engram/memory.db')).toBe('/home/me/.engram/memory.db');
    expect(redactConnectionUrl('postgres://u@h/db')).toBe('postgres://u@h/db');
    expect(redactConnectionUrl('postgres://user:secret@[bad/x')).toBe('postgres://***');
  });
});

describe('redactConnectionUrls', () => {
  it('hides every password of every URL in free text, an @ inside the password included', () => {
    const text =
      'Imported into postgres://user:secret@127.0.0.1:1/x; also mysql://a:b@c@d/e and postgres://h/db?password=secret2 here';
    const safe = redactConnectionUrls(text);
    expect(safe).not.toContain('secret');
    expect(safe).not.toMatch(/:b@c/);
    expect(safe).toBe(
      'Imported into postgres://user:***@127.0.0.1:1/x; also mysql://a:***@d/e and postgres://h/db?password=*** here',
    );
  });

  it('leaves text without a URL alone', () => {
    expect(redactConnectionUrls('note: time is 10:30 @ home')).toBe('note: time is 10:30 @ home');
  });
});
