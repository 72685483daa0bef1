/** The store section: row totals, memories by kind, lifecycle and embedding state. */
import type { HealthDto } from '@engram/diagnostics';
import { meter, type ShareSegment, shareBar, swatch } from './charts.js';
import { el } from './dom.js';
import { EMBEDDING_STATES, KINDS, LIFECYCLES } from './enums.js';
import type { Formatter } from './format.js';
import type { Translate } from './i18n.js';
import { card, label, type RenderContext, read, section } from './render-kit.js';

const KIND_TONES = ['tone-1', 'tone-2', 'tone-3', 'tone-4', 'tone-5', 'tone-6', 'tone-7'];

function shareList(
  t: Translate,
  fmt: Formatter,
  prefix: string,
  keys: readonly string[],
  counts: Readonly<Record<string, number>> | undefined,
  metric: string,
  tones: readonly string[],
): HTMLElement {
  const segments: ShareSegment[] = keys.map((key, i) => ({
    label: label(t, prefix, key),
    value: read(counts, key) ?? 0,
    tone: tones[i % tones.length] ?? 'tone-1',
  }));
  return el(
    'div',
    { class: 'share-block' },
    shareBar(segments),
    el(
      'ul',
      { class: 'legend-list' },
      ...keys.map((key, i) =>
        el(
          'li',
          {},
          swatch(tones[i % tones.length] ?? 'tone-1'),
          el('span', { class: 'legend-label' }, label(t, prefix, key)),
          el(
            'span',
            { class: 'legend-value', 'data-metric': `${metric}.${key}` },
            fmt.count(read(counts, key)),
          ),
        ),
      ),
    ),
  );
}

export function renderStore(dto: HealthDto, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const store = dto.store;
  const totalKeys = [
    ['memories', 'totals.memories'],
    ['events', 'totals.events'],
    ['facts', 'totals.facts'],
    ['skills', 'totals.skills'],
  ] as const;
  const totals = totalKeys.map(([key, text]) =>
    el(
      'div',
      { class: 'stat' },
      el('div', { class: 'stat-label' }, t(text)),
      el(
        'div',
        { class: 'stat-value', 'data-metric': `store.totals.${key}` },
        fmt.count(read(store.totals, key)),
      ),
    ),
  );
  const kindMax = Math.max(0, ...KINDS.map((k) => read(store.byKind, k) ?? 0));
  const byKind = el(
    'ul',
    { class: 'kind-list' },
    ...KINDS.map((key, i) =>
      el(
        'li',
        {},
        el('span', { class: 'kind-label' }, label(t, 'kind', key)),
        meter(read(store.byKind, key) ?? 0, kindMax, KIND_TONES[i] ?? 'tone-1'),
        el(
          'span',
          { class: 'kind-value', 'data-metric': `store.byKind.${key}` },
          fmt.count(read(store.byKind, key)),
        ),
      ),
    ),
  );
  return section(
    'store',
    t('section.store'),
    t('section.store.hint'),
    el('div', { class: 'stats' }, ...totals),
    el(
      'div',
      { class: 'grid grid-3' },
      card(t('store.byKind'), 'card-kind', byKind),
      card(
        t('store.byLifecycle'),
        'card-lifecycle',
        shareList(t, fmt, 'lifecycle', LIFECYCLES, store.byLifecycle, 'store.byLifecycle', [
          'tone-ok',
          'tone-muted',
          'tone-2',
          'tone-warn',
        ]),
      ),
      card(
        t('store.byEmbeddingState'),
        'card-embedding-state',
        shareList(
          t,
          fmt,
          'embeddingState',
          EMBEDDING_STATES,
          store.byEmbeddingState,
          'store.byEmbeddingState',
          ['tone-ok', 'tone-pending', 'tone-2', 'tone-bad'],
        ),
      ),
    ),
  );
}
