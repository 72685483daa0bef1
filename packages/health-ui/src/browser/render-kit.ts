/**
 * Shared building blocks of the page's sections: the render context, safe readers of DTO numbers, and the
 * labelled figures, chips, cards and sections every section is made of. Only known numeric fields and closed
 * enum keys are read; every label comes from the message tables; a missing sample renders as an em dash.
 */
import type { HealthDto } from '@engram/contracts';
import { type Child, el } from './dom.js';
import { EM_DASH, type Formatter } from './format.js';
import type { Locale, Translate } from './i18n.js';
import type { MessageKey } from './messages.js';

/** The runtime part of the DTO. */
export type Snapshot = HealthDto['runtime'];
/** One agent's runtime figures. */
export type Agent = Snapshot['agent'];
/** The process-wide runtime figures. */
export type Process = Snapshot['process'];
/** A p50/p95/max distribution. */
export type Distribution = Agent['extraction']['duration'];

/** What the renderer needs besides the data. */
export interface RenderContext {
  readonly locale: Locale;
  readonly t: Translate;
  readonly fmt: Formatter;
  /** The agent the page shows, or null for all agents. */
  readonly agentId: string | null;
}

/** Translates an enum label `<prefix>.<key>`; the keys are the closed enums of `@engram/contracts`. */
export function label(t: Translate, prefix: string, key: string): string {
  return t(`${prefix}.${key}` as MessageKey);
}

export function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function read<K extends string>(
  record: Readonly<Partial<Record<K, number>>> | undefined,
  key: K,
): number | null {
  return num(record?.[key]);
}

/** A labelled figure; `metric` becomes the value's `data-metric` attribute. */
export function figure(
  name: string,
  value: string,
  metric: string,
  extra?: string,
  derived = false,
): HTMLElement {
  // `data-metric` is always the value's JSON path in the DTO; a figure computed from several fields says so.
  const attribute = derived ? 'data-derived' : 'data-metric';
  return el(
    'div',
    { class: 'figure' },
    el('dt', {}, name),
    el(
      'dd',
      {},
      el('span', { class: value === EM_DASH ? 'value missing' : 'value', [attribute]: metric }, value),
      extra === undefined ? null : el('span', { class: 'extra' }, extra),
    ),
  );
}

export function figures(...items: HTMLElement[]): HTMLElement {
  return el('dl', { class: 'figures' }, ...items);
}

export function card(title: string, className: string, ...children: Child[]): HTMLElement {
  return el('article', { class: `card ${className}` }, el('h3', { class: 'card-title' }, title), ...children);
}

export function section(id: string, title: string, hint: string, ...children: Child[]): HTMLElement {
  return el(
    'section',
    { class: `section section-${id}`, id: `section-${id}`, 'aria-labelledby': `heading-${id}` },
    el(
      'header',
      { class: 'section-header' },
      el('h2', { id: `heading-${id}` }, title),
      el('p', { class: 'hint' }, hint),
    ),
    ...children,
  );
}

/** Chips of enum counts; zero counts are muted (or left out when `hideZero`). */
export function chips(
  t: Translate,
  fmt: Formatter,
  prefix: string,
  keys: readonly string[],
  counts: Readonly<Record<string, number>> | undefined,
  metric: string,
  tone: (key: string) => string = () => 'neutral',
): HTMLElement {
  return el(
    'ul',
    { class: 'chips' },
    ...keys.map((key) => {
      const value = read(counts, key);
      const zero = value === null || value === 0;
      return el(
        'li',
        { class: zero ? 'chip zero' : `chip ${tone(key)}` },
        el('span', { class: 'chip-label' }, label(t, prefix, key)),
        el('span', { class: 'chip-value', 'data-metric': `${metric}.${key}` }, fmt.count(value)),
      );
    }),
  );
}

export function subheading(text: string): HTMLElement {
  return el('h4', { class: 'subheading' }, text);
}

export function distributionLine(
  t: Translate,
  name: string,
  dist: Distribution | undefined,
  format: (v: number | null) => string,
  metric: string,
): HTMLElement {
  const cell = (key: 'p50' | 'p95' | 'max', text: MessageKey): HTMLElement =>
    el(
      'span',
      { class: 'dist-cell' },
      el('span', { class: 'dist-key' }, t(text)),
      el('span', { class: 'dist-value', 'data-metric': `${metric}.${key}` }, format(num(dist?.[key]))),
    );
  return el(
    'div',
    { class: 'dist' },
    el('span', { class: 'dist-name' }, name),
    cell('p50', 'dist.p50'),
    cell('p95', 'dist.p95'),
    cell('max', 'dist.max'),
  );
}
