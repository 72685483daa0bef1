import { en, type MessageKey, type MessageTable } from './messages.js';
import { zhCN } from './messages-zh-cn.js';

/** The page's languages. */
export const LOCALES: readonly ['en', 'zh-CN'] = ['en', 'zh-CN'] as const;
/** A page language. */
export type Locale = (typeof LOCALES)[number];

/** Message tables by language. */
export const MESSAGES: Readonly<Record<Locale, MessageTable>> = Object.freeze({ en, 'zh-CN': zhCN });

/** Placeholder values of a message. */
export type MessageParams = Readonly<Record<string, string | number>>;

/** Looks up a message and fills its `{name}` placeholders. */
export type Translate = (key: MessageKey, params?: MessageParams) => string;

/** True when `value` names a supported language. */
export function isLocale(value: unknown): value is Locale {
  return value === 'en' || value === 'zh-CN';
}

/** Picks the page language from browser language tags (`navigator.languages`): any `zh*` → zh-CN, else English. */
export function resolveLocale(tags: readonly (string | null | undefined)[]): Locale {
  for (const tag of tags) {
    if (typeof tag !== 'string' || tag === '') continue;
    const lower = tag.toLowerCase();
    if (lower === 'zh' || lower.startsWith('zh-')) return 'zh-CN';
    if (lower === 'en' || lower.startsWith('en-')) return 'en';
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
