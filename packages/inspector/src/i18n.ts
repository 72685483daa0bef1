import { en, type MessageKey, type MessageTable } from './messages.js';
import { zhCN } from './messages-zh-cn.js';

/** The inspector's languages (the health page's). */
export const LOCALES: readonly ['en', 'zh-CN'] = ['en', 'zh-CN'] as const;
/** A page language. */
export type Locale = (typeof LOCALES)[number];

/** Message tables by language. */
export const MESSAGES: Readonly<Record<Locale, MessageTable>> = Object.freeze({ en, 'zh-CN': zhCN });

/** Placeholder values of a message. */
export type MessageParams = Readonly<Record<string, string | number>>;

/** Looks up a message and fills its `{name}` placeholders (values are plain text; the caller escapes). */
export type Translate = (key: MessageKey, params?: MessageParams) => string;

/** True when `value` names a supported language. */
export function isLocale(value: unknown): value is Locale {
  return value === 'en' || value === 'zh-CN';
}

/**
 * Picks the language as the health page does: `?lang=`, then the last choice (a cookie here, local storage
 * there), then the browser's languages (`Accept-Language` here, `navigator.languages` there): any `zh*` is
 * zh-CN, else English.
 */
export function chooseLocale(
  query: string | null,
  cookie: string | null,
  acceptLanguage: string | null,
): Locale {
  if (isLocale(query)) return query;
  if (isLocale(cookie)) return cookie;
  const tags = (acceptLanguage ?? '')
    .split(',')
    .map((part) => part.split(';')[0]?.trim().toLowerCase() ?? '')
    .filter((tag) => tag !== '');
  for (const tag of tags) {
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh-CN';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return 'en';
}

/** Fills `{name}` placeholders; an unknown placeholder stays as written. */
export function fillTemplate(template: string, params?: MessageParams): string {
  if (params === undefined) return template;
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

/** The placeholder names of a template, sorted. */
export function placeholdersOf(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1] ?? '').sort();
}

/** Creates the translator of one language. */
export function createTranslator(locale: Locale): Translate {
  const table = MESSAGES[locale];
  return (key, params) => fillTemplate(table[key], params);
}
