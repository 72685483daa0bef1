import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as enums from '@engram/contracts/enums';
import { describe, expect, it } from 'vitest';
import { createTranslator, fillTemplate, MESSAGES, placeholdersOf, resolveLocale } from './i18n.js';
import { en } from './messages.js';
import { zhCN } from './messages-zh-cn.js';

const browserDir = fileURLToPath(new URL('.', import.meta.url));
const tables = {
  en: en as Readonly<Record<string, string>>,
  'zh-CN': zhCN as Readonly<Record<string, string>>,
};
const allKeys = new Set([...Object.keys(en), ...Object.keys(zhCN)]);
const prefixes = new Set([...allKeys].map((key) => key.split('.')[0]));

/**
 * Every closed enum the page renders, by the message-key prefix its labels use (`<prefix>.<key>`). The lists
 * are the contracts' tuples, the very module the handler serves to the page.
 */
const ENUM_LABEL_PREFIXES: Readonly<Record<string, readonly string[]>> = {
  purpose: enums.RETRIEVAL_PURPOSES,
  stage: enums.RETRIEVAL_STAGES,
  outcome: enums.RETRIEVAL_OUTCOMES,
  degradation: enums.DEGRADATION_CAUSES,
  candidate: enums.CANDIDATE_ARMS,
  kind: enums.MEMORY_KINDS,
  lifecycle: enums.LIFECYCLES,
  embeddingState: enums.EMBEDDING_STATES,
  integrity: enums.INTEGRITY_STATES,
  extractionOutcome: enums.EXTRACTION_OUTCOMES,
  decision: enums.EXTRACTION_DECISIONS,
  transition: enums.DRAIN_TRANSITIONS,
  phaseOutcome: enums.PHASE_OUTCOMES,
  step: enums.MAINTENANCE_STEPS,
  provider: enums.PROVIDER_KINDS,
  admission: enums.ADMISSION_DECISIONS,
  race: enums.PROVIDER_RACES,
  circuit: enums.CIRCUIT_STATES,
  warmup: enums.VECTOR_WARMUP_OUTCOMES,
  statement: enums.STATEMENT_KINDS,
};

/** Renderer sources (the message tables excluded). */
function rendererSources(): { name: string; text: string }[] {
  return readdirSync(browserDir)
    .filter(
      (name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !/^messages(-[a-z-]+)?\.ts$/.test(name),
    )
    .map((name) => ({ name, text: readFileSync(`${browserDir}/${name}`, 'utf8') }));
}

/** Message keys the renderer uses: key-shaped string literals in its sources, plus every enum label. */
function usedKeys(): { literal: Set<string>; enumLabels: Set<string> } {
  const literal = new Set<string>();
  const sources = rendererSources();
  expect(sources.length).toBeGreaterThan(3);
  for (const { text } of sources) {
    for (const match of text.matchAll(/'([A-Za-z][\w-]*(?:\.[\w-]+)+)'/g)) {
      const candidate = match[1] ?? '';
      // Only literals that start like a message key count (file names, selectors and URLs do not).
      if (prefixes.has(candidate.split('.')[0])) literal.add(candidate);
    }
  }
  const enumLabels = new Set<string>();
  for (const [prefix, keys] of Object.entries(ENUM_LABEL_PREFIXES)) {
    for (const key of keys) enumLabels.add(`${prefix}.${key}`);
  }
  return { literal, enumLabels };
}

describe('message tables', () => {
  it('have exactly the same keys in English and Simplified Chinese', () => {
    const missingInZh = Object.keys(en).filter((key) => !(key in zhCN));
    const missingInEn = Object.keys(zhCN).filter((key) => !(key in en));
    expect(missingInZh).toEqual([]);
    expect(missingInEn).toEqual([]);
    expect(Object.keys(MESSAGES).sort()).toEqual(['en', 'zh-CN']);
  });

  it('have a non-empty text and the same placeholders for every key', () => {
    for (const key of allKeys) {
      for (const [locale, table] of Object.entries(tables)) {
        const text = table[key];
        expect(typeof text === 'string' && text.trim().length > 0, `${locale} ${key}`).toBe(true);
      }
      expect(placeholdersOf(tables['zh-CN'][key] ?? ''), key).toEqual(placeholdersOf(tables.en[key] ?? ''));
    }
  });

  it('label every enum key the page renders, in both languages', () => {
    const { enumLabels } = usedKeys();
    const missing = [...enumLabels].filter((key) => !(key in en) || !(key in zhCN));
    expect(missing).toEqual([]);
  });

  it('cover exactly the enum label prefixes the renderer passes to its label helpers', () => {
    const used = new Set<string>();
    const call =
      /\b(?:label\(\s*(?:ctx\.)?t,|chips\(\s*t,\s*fmt,|shareList\(\s*t,\s*fmt,|providerTable\(\s*ctx,)\s*'(\w+)'/g;
    for (const { text } of rendererSources()) {
      for (const match of text.matchAll(call)) used.add(match[1] ?? '');
    }
    expect([...used].sort()).toEqual(Object.keys(ENUM_LABEL_PREFIXES).sort());
  });

  it('contain no key the renderer does not use, and the renderer uses no key they lack', () => {
    const { literal, enumLabels } = usedKeys();
    const used = new Set([...literal, ...enumLabels]);
    expect([...allKeys].filter((key) => !used.has(key)).sort()).toEqual([]);
    expect([...literal].filter((key) => !allKeys.has(key)).sort()).toEqual([]);
  });

  it('translate every text into Chinese except language names and percentile symbols', () => {
    const sameOnPurpose = new Set([
      'lang.en',
      'lang.zh-CN',
      'table.p50',
      'table.p95',
      'dist.p50',
      'dist.p95',
    ]);
    const untranslated = Object.keys(en).filter(
      (key) => !sameOnPurpose.has(key) && !/[\u3400-\u9fff]/.test(tables['zh-CN'][key] ?? ''),
    );
    expect(untranslated).toEqual([]);
  });
});

describe('language choice', () => {
  it('follows the browser language, Chinese variants to zh-CN, anything else to English', () => {
    expect(resolveLocale(['zh-CN', 'en'])).toBe('zh-CN');
    expect(resolveLocale(['zh'])).toBe('zh-CN');
    expect(resolveLocale(['zh-Hans-SG'])).toBe('zh-CN');
    expect(resolveLocale(['fr-FR', 'zh-CN'])).toBe('zh-CN');
    expect(resolveLocale(['en-GB', 'zh-CN'])).toBe('en');
    expect(resolveLocale(['fr-FR'])).toBe('en');
    expect(resolveLocale([])).toBe('en');
    expect(resolveLocale([undefined, ''])).toBe('en');
  });

  it('fills placeholders and leaves unknown ones visible', () => {
    expect(fillTemplate('{value} of {max}', { value: 3, max: 64 })).toBe('3 of 64');
    expect(fillTemplate('{value} {other}', { value: 1 })).toBe('1 {other}');
    expect(createTranslator('zh-CN')('scope.agent', { agent: 'a-1' })).toBe('智能体：a-1');
    expect(createTranslator('en')('toolbar.every', { seconds: 15 })).toBe('Every 15 s');
  });
});
