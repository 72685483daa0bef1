/**
 * The process-wide section: gauges (queues, backlogs, open stores, provider load, breaker state) apart from
 * the cumulative counters (admissions, races, breaker and collector counters, warm-ups, statements).
 */

import {
  ADMISSION_DECISIONS,
  CIRCUIT_STATES,
  PROVIDER_KINDS,
  PROVIDER_RACES,
  type ProviderKind,
  STATEMENT_KINDS,
  VECTOR_WARMUP_OUTCOMES,
} from './contracts/enums.js';
import { type Child, el } from './dom.js';
import { EM_DASH, isPresent } from './format.js';
import type { MessageKey } from './messages.js';
import { chips, label, num, type Process, type RenderContext, read, section } from './render-kit.js';

/** One key-value row: a label, the value (its `data-metric` is the DTO path) and an optional peak. */
function row(
  ctx: RenderContext,
  name: string,
  value: string,
  metric: string,
  options: { readonly peak?: number | null; readonly derived?: boolean } = {},
): HTMLElement {
  const attribute = options.derived === true ? 'data-derived' : 'data-metric';
  return el(
    'div',
    { class: 'kv' },
    el('dt', {}, name),
    el(
      'dd',
      {},
      options.peak === undefined
        ? null
        : el(
            'span',
            { class: 'kv-peak' },
            ctx.t('value.peak', { value: isPresent(options.peak) ? ctx.fmt.count(options.peak) : EM_DASH }),
          ),
      el('span', { class: value === EM_DASH ? 'kv-value missing' : 'kv-value', [attribute]: metric }, value),
    ),
  );
}

/** A titled box around any content. */
function box(title: string, ...children: Child[]): HTMLElement {
  return el('div', { class: 'group' }, el('h4', { class: 'group-title' }, title), ...children);
}

/** Cumulative-counter rows read from one DTO object: `[label key, field]`, metric path `${prefix}.${field}`. */
function counterRows<T extends object>(
  ctx: RenderContext,
  prefix: string,
  source: T | null | undefined,
  fields: readonly (readonly [MessageKey, keyof T & string])[],
): HTMLElement[] {
  return fields.map(([key, field]) =>
    row(ctx, ctx.t(key), ctx.fmt.count(num(source?.[field])), `${prefix}.${field}`),
  );
}

function group(title: string, ...rows: HTMLElement[]): HTMLElement {
  return el(
    'div',
    { class: 'group' },
    el('h4', { class: 'group-title' }, title),
    el('dl', { class: 'kv-list' }, ...rows),
  );
}

/** Enum counts per provider: one row per enum key, one column per provider kind. */
function providerTable(
  ctx: RenderContext,
  prefix: string,
  keys: readonly string[],
  counts: (kind: ProviderKind) => Readonly<Record<string, number>> | undefined,
  metric: (kind: ProviderKind) => string,
): HTMLElement {
  return el(
    'table',
    { class: 'count-table' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, ''),
        ...PROVIDER_KINDS.map((kind) =>
          el('th', { scope: 'col', class: 'num' }, label(ctx.t, 'provider', kind)),
        ),
      ),
    ),
    el(
      'tbody',
      {},
      ...keys.map((key) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, label(ctx.t, prefix, key)),
          ...PROVIDER_KINDS.map((kind) =>
            el(
              'td',
              { class: 'num', 'data-metric': `${metric(kind)}.${key}` },
              ctx.fmt.count(read(counts(kind), key)),
            ),
          ),
        ),
      ),
    ),
  );
}

export function renderProcess(process: Process, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const q = process.extractionQueue;
  const b = process.embeddingBacklog;
  const v = process.vectorStores;
  const c = process.queryEmbeddingCircuit;
  const collector = process.collector;
  const circuitState = CIRCUIT_STATES.find((key) => c?.state?.[key] === true);
  const P = 'runtime.process';
  const gauges = el(
    'article',
    { class: 'card card-gauges' },
    el(
      'header',
      { class: 'card-header' },
      el('h3', { class: 'card-title' }, t('process.gauges')),
      el('p', { class: 'hint' }, t('process.gauges.hint')),
    ),
    el(
      'div',
      { class: 'group-grid' },
      group(
        t('process.extractionQueue'),
        row(ctx, t('process.queueDepth'), fmt.count(num(q?.depth)), `${P}.extractionQueue.depth`, {
          peak: num(q?.depthHighWater),
        }),
        row(ctx, t('process.oldestAge'), fmt.age(num(q?.oldestAgeMs)), `${P}.extractionQueue.oldestAgeMs`),
      ),
      group(
        t('process.embeddingBacklog'),
        row(ctx, t('process.backlogRows'), fmt.count(num(b?.total)), `${P}.embeddingBacklog.total`),
        row(
          ctx,
          t('process.backlogAgents'),
          fmt.count(num(b?.activeAgents)),
          `${P}.embeddingBacklog.activeAgents`,
        ),
      ),
      group(
        t('process.vectorStores'),
        row(ctx, t('process.openStores'), fmt.count(num(v?.openStores)), `${P}.vectorStores.openStores`, {
          peak: num(v?.openStoresHighWater),
        }),
        row(ctx, t('process.leases'), fmt.count(num(v?.leases)), `${P}.vectorStores.leases`, {
          peak: num(v?.leasesHighWater),
        }),
      ),
      ...PROVIDER_KINDS.map((kind) => {
        const p = process.providers?.[kind];
        return group(
          label(t, 'provider', kind),
          row(ctx, t('process.providerQueued'), fmt.count(num(p?.queued)), `${P}.providers.${kind}.queued`, {
            peak: num(p?.queuedHighWater),
          }),
          row(ctx, t('process.providerActive'), fmt.count(num(p?.active)), `${P}.providers.${kind}.active`, {
            peak: num(p?.activeHighWater),
          }),
        );
      }),
      group(
        t('process.circuit'),
        row(
          ctx,
          t('process.circuitState'),
          circuitState === undefined ? EM_DASH : label(t, 'circuit', circuitState),
          `${P}.queryEmbeddingCircuit.state`,
          { derived: true },
        ),
      ),
      group(
        t('process.collector'),
        row(
          ctx,
          t('process.agentsTracked'),
          t('value.ofMax', {
            value: fmt.count(num(collector?.agentsTracked)),
            max: fmt.count(num(collector?.maxAgents)),
          }),
          `${P}.collector.agentsTracked`,
          { derived: true },
        ),
      ),
    ),
  );
  const counters = el(
    'article',
    { class: 'card card-counters' },
    el(
      'header',
      { class: 'card-header' },
      el('h3', { class: 'card-title' }, t('process.counters')),
      el('p', { class: 'hint' }, t('process.counters.hint')),
    ),
    el(
      'div',
      { class: 'counter-grid' },
      el(
        'div',
        { class: 'counter-column' },
        box(
          t('process.admissions'),
          providerTable(
            ctx,
            'admission',
            ADMISSION_DECISIONS,
            (kind) => process.providers?.[kind]?.admissions,
            (kind) => `${P}.providers.${kind}.admissions`,
          ),
        ),
        box(
          t('process.races'),
          providerTable(
            ctx,
            'race',
            PROVIDER_RACES,
            (kind) => process.providers?.[kind]?.races,
            (kind) => `${P}.providers.${kind}.races`,
          ),
        ),
      ),
      el(
        'div',
        { class: 'counter-column' },
        group(
          t('process.circuitCounters'),
          ...counterRows(ctx, `${P}.queryEmbeddingCircuit`, c, [
            ['process.circuitFailures', 'failures'],
            ['process.circuitOpened', 'opened'],
            ['process.circuitProbes', 'halfOpenProbes'],
            ['process.circuitRejected', 'rejected'],
          ]),
        ),
        group(
          t('process.collector'),
          ...counterRows(ctx, `${P}.collector`, collector, [
            ['process.agentsEvicted', 'agentsEvicted'],
            ['process.agentsExpired', 'agentsExpired'],
            ['process.recordsRejected', 'recordsRejected'],
            ['process.observerFailures', 'observerFailures'],
          ]),
        ),
      ),
      el(
        'div',
        { class: 'counter-column' },
        box(
          t('process.warmup'),
          chips(t, fmt, 'warmup', VECTOR_WARMUP_OUTCOMES, v?.warmup, `${P}.vectorStores.warmup`, (key) =>
            key === 'failed' ? 'bad' : 'neutral',
          ),
        ),
        box(
          t('process.statements'),
          chips(t, fmt, 'statement', STATEMENT_KINDS, process.store?.statements, `${P}.store.statements`),
        ),
      ),
    ),
  );
  return section(
    'process',
    t('section.process'),
    t('section.process.hint'),
    el('div', { class: 'grid grid-1 process-grid' }, gauges, counters),
  );
}
