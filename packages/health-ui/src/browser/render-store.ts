/** The store section: row totals, the file's integrity check, memories by kind, lifecycle and embedding state. */
import type { HealthDto } from '@engram/contracts';
import { meter, type ShareSegment, shareBar, swatch } from './charts.js';
import {
  EMBEDDING_STATES,
  type EmbeddingState,
  INTEGRITY_STATES,
  type IntegrityState,
  LIFECYCLES,
  type Lifecycle,
  MEMORY_KINDS,
} from './contracts/enums.js';
import { el } from './dom.js';
import type { Formatter } from './format.js';
import type { Translate } from './i18n.js';
import { card, label, num, type RenderContext, read, section } from './render-kit.js';

const KIND_TONES = ['tone-1', 'tone-2', 'tone-3', 'tone-4', 'tone-5', 'tone-6', 'tone-7'];

/** Each lifecycle state's colour: the colour belongs to the state, whatever order the states come in. */
const LIFECYCLE_TONES: Readonly<Record<Lifecycle, string>> = {
  active: 'tone-ok',
  archived: 'tone-muted',
  superseded: 'tone-2',
  conflicted: 'tone-warn',
};

/** Each embedding state's colour. */
const EMBEDDING_STATE_TONES: Readonly<Record<EmbeddingState, string>> = {
  ready: 'tone-ok',
  pending: 'tone-pending',
  ftsOnly: 'tone-2',
  error: 'tone-bad',
};

/** Each integrity outcome's colour. */
const INTEGRITY_TONES: Readonly<Record<IntegrityState, string>> = {
  ok: 'tone-ok',
  failed: 'tone-bad',
  notChecked: 'tone-muted',
};

/**
 * The integrity stat: the last check's outcome (`not checked` when the store reports none) and when it ran.
 * A failed check means the file refuses writes until it is recovered, unless it failed only on rows no reader
 * can use or damaged vector chunks: then the counts are shown and writes stay allowed.
 */
function integrityStat(dto: HealthDto, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const reported = dto.store.integrity;
  const state: IntegrityState =
    reported !== undefined && (INTEGRITY_STATES as readonly string[]).includes(reported.state)
      ? reported.state
      : 'notChecked';
  const rows = num(reported?.badRows) ?? 0;
  const chunks = num(reported?.damagedVectorChunks) ?? 0;
  const damaged = state === 'failed' && rows + chunks > 0 ? { rows, chunks } : null;
  return el(
    'div',
    { class: 'stat' },
    el('div', { class: 'stat-label' }, t('store.integrity')),
    el(
      'div',
      { class: `stat-value ${INTEGRITY_TONES[state]}`, 'data-integrity': state },
      damaged === null ? label(t, 'integrity', state) : t('store.integrity.damaged', damaged),
    ),
    el(
      'div',
      { class: 'stat-label', 'data-integrity-checked-at': '' },
      reported?.checkedAt === null || reported?.checkedAt === undefined
        ? t('store.integrity.never')
        : fmt.dateTime(reported.checkedAt),
    ),
  );
}

function shareList<K extends string>(
  t: Translate,
  fmt: Formatter,
  prefix: string,
  keys: readonly K[],
  counts: Readonly<Record<K, number>> | undefined,
  metric: string,
  tones: Readonly<Record<K, string>>,
): HTMLElement {
  const segments: ShareSegment[] = keys.map((key) => ({
    label: label(t, prefix, key),
    value: read(counts, key) ?? 0,
    tone: tones[key],
  }));
  return el(
    'div',
    { class: 'share-block' },
    shareBar(segments),
    el(
      'ul',
      { class: 'legend-list' },
      ...keys.map((key) =>
        el(
          'li',
          {},
          swatch(tones[key]),
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
  const kindMax = Math.max(0, ...MEMORY_KINDS.map((k) => read(store.byKind, k) ?? 0));
  const byKind = el(
    'ul',
    { class: 'kind-list' },
    ...MEMORY_KINDS.map((key, i) =>
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
    el('div', { class: 'stats' }, ...totals, integrityStat(dto, ctx)),
    el(
      'div',
      { class: 'grid grid-3' },
      card(t('store.byKind'), 'card-kind', byKind),
      card(
        t('store.byLifecycle'),
        'card-lifecycle',
        shareList(t, fmt, 'lifecycle', LIFECYCLES, store.byLifecycle, 'store.byLifecycle', LIFECYCLE_TONES),
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
          EMBEDDING_STATE_TONES,
        ),
      ),
    ),
  );
}
