import { hasCjk } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { chooseLocale, createTranslator, placeholdersOf } from './i18n.js';
import { en, type MessageKey } from './messages.js';
import { zhCN } from './messages-zh-cn.js';

const keys = Object.keys(en) as MessageKey[];
/** Texts that are the same in both languages on purpose (language names, a dash). */
const SAME_IN_BOTH: ReadonlySet<MessageKey> = new Set(['lang.en', 'lang.zh-CN', 'backlog.unknown']);

describe('the message tables', () => {
  it('have the same keys and the same placeholders in English and Chinese', () => {
    expect(Object.keys(zhCN).sort()).toEqual([...keys].sort());
    for (const key of keys) expect([key, placeholdersOf(zhCN[key])]).toEqual([key, placeholdersOf(en[key])]);
  });

  it('leave no Chinese text in English', () => {
    const untranslated = keys.filter((key) => !SAME_IN_BOTH.has(key) && zhCN[key] === en[key]);
    expect(untranslated).toEqual([]);
    const noHan = keys.filter((key) => !SAME_IN_BOTH.has(key) && !hasCjk(zhCN[key]));
    expect(noHan).toEqual([]);
  });

  it('fill placeholders', () => {
    expect(createTranslator('en')('session.tokens', { count: 12 })).toBe('12 tokens');
    expect(createTranslator('zh-CN')('session.tokens', { count: 12 })).toBe('12 个词元');
  });
});

describe('the language choice (the health page rule)', () => {
  it('takes ?lang=, then the remembered choice, then Accept-Language, else English', () => {
    expect(chooseLocale('zh-CN', 'en', 'en-US')).toBe('zh-CN');
    expect(chooseLocale(null, 'zh-CN', 'en-US')).toBe('zh-CN');
    expect(chooseLocale('fr', 'bogus', 'zh-TW,en;q=0.5')).toBe('zh-CN');
    expect(chooseLocale(null, null, 'de-DE, en;q=0.8')).toBe('en');
    expect(chooseLocale(null, null, 'de-DE')).toBe('en');
    expect(chooseLocale(null, null, null)).toBe('en');
  });
});
