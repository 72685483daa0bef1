/**
 * Renders the health DTO into DOM nodes. Only known numeric fields and closed enum keys are read; every
 * label comes from the message tables; a missing sample renders as an em dash.
 */
import type { HealthDto } from '@engram/diagnostics';
import { latencyChart, meter, type ShareSegment, shareBar, swatch } from './charts.js';
import { type Child, el } from './dom.js';
import {
  ADMISSIONS,
  CANDIDATES,
  CIRCUIT_STATES,
  DECISIONS,
  DEGRADATIONS,
  EMBEDDING_STATES,
  EXTRACTION_OUTCOMES,
  KINDS,
  LIFECYCLES,
  OUTCOMES,
  PHASE_OUTCOMES,
  PROVIDERS,
  type ProviderKey,
  PURPOSES,
  type PurposeKey,
  RACES,
  STAGES,
  STATEMENTS,
  STEPS,
  TRANSITIONS,
  WARMUPS,
} from './enums.js';
import { EM_DASH, type Formatter, isPresent } from './format.js';
import type { Locale, Translate } from './i18n.js';
import type { MessageKey } from './messages.js';

type Snapshot = HealthDto['runtime'];
type Agent = Snapshot['agent'];
type Process = Snapshot['process'];
type Distribution = Agent['extraction']['duration'];

/** What the renderer needs besides the data. */
export interface RenderContext {
  readonly locale: Locale;
  readonly t: Translate;
  readonly fmt: Formatter;
  /** The agent the page shows, or null for all agents. */
  readonly agentId: string | null;
}

/** Translates an enum label `<prefix>.<key>`; the prefixes and keys are the closed lists of `enums.ts`. */
function label(t: Translate, prefix: string, key: string): string {
  return t(`${prefix}.${key}` as MessageKey);
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function read<K extends string>(
  record: Readonly<Partial<Record<K, number>>> | undefined,
  key: K,
): number | null {
  return num(record?.[key]);
}

/** A labelled figure; `metric` becomes the value's `data-metric` attribute. */
function figure(name: string, value: string, metric: string, extra?: string, derived = false): HTMLElement {
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

function figures(...items: HTMLElement[]): HTMLElement {
  return el('dl', { class: 'figures' }, ...items);
}

function card(title: string, className: string, ...children: Child[]): HTMLElement {
  return el('article', { class: `card ${className}` }, el('h3', { class: 'card-title' }, title), ...children);
}

function section(id: string, title: string, hint: string, ...children: Child[]): HTMLElement {
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
function chips(
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

function subheading(text: string): HTMLElement {
  return el('h4', { class: 'subheading' }, text);
}

function distributionLine(
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

// -------------------------------------------------------------------------------------------------------
// Store

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

function renderStore(dto: HealthDto, ctx: RenderContext): HTMLElement {
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

// -------------------------------------------------------------------------------------------------------
// Retrieval

function renderPurpose(purpose: PurposeKey, agent: Agent, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const data = agent.retrieval?.[purpose];
  const base = `runtime.agent.retrieval.${purpose}`;
  const rows = STAGES.map((stage) => {
    const dist = data?.latency?.[stage];
    return {
      stage,
      label: label(t, 'stage', stage),
      count: num(dist?.total),
      p50: num(dist?.p50),
      p95: num(dist?.p95),
      max: num(dist?.max),
      metric: `${base}.latency.${stage}`,
    };
  });
  const table = el(
    'table',
    { class: 'latency-table' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, t('table.stage')),
        el('th', { scope: 'col', class: 'num' }, t('table.samples')),
        el('th', { scope: 'col', class: 'num' }, t('table.p50')),
        el('th', { scope: 'col', class: 'num' }, t('table.p95')),
        el('th', { scope: 'col', class: 'num' }, t('table.max')),
      ),
    ),
    el(
      'tbody',
      {},
      ...rows.map((row) =>
        el(
          'tr',
          { class: row.stage === 'total' ? 'total' : null },
          el('th', { scope: 'row' }, row.label),
          el('td', { class: 'num', 'data-metric': `${row.metric}.total` }, fmt.count(row.count)),
          ...(['p50', 'p95', 'max'] as const).map((key) => {
            const text = fmt.ms(row[key]);
            return el(
              'td',
              { class: text === EM_DASH ? 'num missing' : 'num', 'data-metric': `${row.metric}.${key}` },
              text,
            );
          }),
        ),
      ),
    ),
  );
  const degradedKeys = DEGRADATIONS.filter((key) => (read(data?.degradations, key) ?? 0) > 0);
  const degradations =
    degradedKeys.length === 0
      ? el(
          'p',
          { class: 'quiet', 'data-derived': `${base}.degradations.none` },
          t('retrieval.noDegradations'),
        )
      : chips(t, fmt, 'degradation', degradedKeys, data?.degradations, `${base}.degradations`, () => 'warn');
  const candidates = el(
    'div',
    { class: 'inline-figures' },
    ...CANDIDATES.map((key) =>
      el(
        'span',
        {},
        el('span', { class: 'inline-key' }, label(t, 'candidate', key)),
        el(
          'span',
          { class: 'inline-value', 'data-metric': `${base}.candidates.${key}.p50` },
          fmt.count(num(data?.candidates?.[key]?.p50)),
        ),
      ),
    ),
  );
  const operations = num(data?.operations);
  return el(
    'article',
    { class: 'card purpose', 'data-purpose': purpose },
    el(
      'header',
      { class: 'purpose-header' },
      el('h3', { class: 'card-title' }, label(t, 'purpose', purpose)),
      el(
        'div',
        { class: 'purpose-calls' },
        el('span', { class: 'purpose-calls-label' }, t('retrieval.operations')),
        el(
          'span',
          { class: 'purpose-calls-value', 'data-metric': `${base}.operations` },
          fmt.count(operations),
        ),
      ),
    ),
    latencyChart(rows, t, fmt),
    operations === null || operations === 0
      ? el('p', { class: 'quiet no-samples' }, t('retrieval.noSamples'))
      : null,
    table,
    subheading(t('retrieval.outcomes')),
    chips(t, fmt, 'outcome', OUTCOMES, data?.outcomes, `${base}.outcomes`, (key) =>
      key === 'completed' ? 'ok' : key === 'failed' ? 'bad' : 'neutral',
    ),
    subheading(t('retrieval.degradations')),
    degradations,
    subheading(t('retrieval.candidates')),
    candidates,
  );
}

function renderRetrieval(dto: HealthDto, ctx: RenderContext): HTMLElement {
  const agent = dto.runtime.agent;
  return section(
    'retrieval',
    ctx.t('section.retrieval'),
    ctx.t('section.retrieval.hint'),
    el('div', { class: 'grid grid-2' }, ...PURPOSES.map((purpose) => renderPurpose(purpose, agent, ctx))),
  );
}

// -------------------------------------------------------------------------------------------------------
// Background work: extraction, embedding drain, maintenance

function renderExtraction(agent: Agent, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const x = agent.extraction;
  return card(
    t('extraction.title'),
    'card-extraction',
    figures(
      figure(t('extraction.chunks'), fmt.count(num(x?.chunks)), 'runtime.agent.extraction.chunks'),
      figure(
        t('extraction.candidates'),
        fmt.count(num(x?.candidates)),
        'runtime.agent.extraction.candidates',
      ),
      figure(
        t('extraction.invalidOutputs'),
        fmt.count(num(x?.invalidOutputs)),
        'runtime.agent.extraction.invalidOutputs',
      ),
      figure(t('extraction.conflicts'), fmt.count(num(x?.conflicts)), 'runtime.agent.extraction.conflicts'),
    ),
    subheading(t('extraction.outcomes')),
    chips(
      t,
      fmt,
      'extractionOutcome',
      EXTRACTION_OUTCOMES,
      x?.outcomes,
      'runtime.agent.extraction.outcomes',
      (key) => (key === 'completed' ? 'ok' : key === 'failed' ? 'bad' : 'neutral'),
    ),
    subheading(t('extraction.decisions')),
    chips(t, fmt, 'decision', DECISIONS, x?.decisions, 'runtime.agent.extraction.decisions'),
    distributionLine(
      t,
      t('extraction.duration'),
      x?.duration,
      fmt.duration,
      'runtime.agent.extraction.duration',
    ),
  );
}

function renderEmbedding(agent: Agent, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const e = agent.embedding;
  return card(
    t('embedding.title'),
    'card-embedding',
    figures(
      figure(t('embedding.batches'), fmt.count(num(e?.batches)), 'runtime.agent.embedding.batches'),
      figure(t('embedding.rows'), fmt.count(num(e?.rows)), 'runtime.agent.embedding.rows'),
    ),
    subheading(t('embedding.transitions')),
    chips(t, fmt, 'transition', TRANSITIONS, e?.transitions, 'runtime.agent.embedding.transitions', (key) =>
      key === 'ready' ? 'ok' : key === 'error' ? 'bad' : key === 'stale' ? 'warn' : 'neutral',
    ),
    distributionLine(
      t,
      t('embedding.batchSize'),
      e?.batchSize,
      fmt.count,
      'runtime.agent.embedding.batchSize',
    ),
    distributionLine(
      t,
      t('embedding.duration'),
      e?.duration,
      fmt.duration,
      'runtime.agent.embedding.duration',
    ),
  );
}

function renderMaintenance(agent: Agent, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const m = agent.maintenance;
  const outcomeTone = (key: string): string =>
    key === 'completed' ? 'ok' : key === 'failed' ? 'bad' : 'neutral';
  const stepTable = el(
    'table',
    { class: 'steps-table' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, t('table.step')),
        ...PHASE_OUTCOMES.map((key) =>
          el('th', { scope: 'col', class: 'num' }, label(t, 'phaseOutcome', key)),
        ),
        el('th', { scope: 'col', class: 'num denials' }, t('table.denials')),
      ),
    ),
    el(
      'tbody',
      {},
      ...STEPS.map((step) => {
        const denied = read(m?.heavy?.denials, step);
        return el(
          'tr',
          {},
          el('th', { scope: 'row' }, label(t, 'step', step)),
          ...PHASE_OUTCOMES.map((key) =>
            el(
              'td',
              { class: 'num', 'data-metric': `runtime.agent.maintenance.heavy.steps.${step}.${key}` },
              fmt.count(read(m?.heavy?.steps?.[step], key)),
            ),
          ),
          el(
            'td',
            {
              class: denied !== null && denied > 0 ? 'num denials hot' : 'num denials',
              'data-metric': `runtime.agent.maintenance.heavy.denials.${step}`,
            },
            fmt.count(denied),
          ),
        );
      }),
    ),
  );
  return card(
    t('maintenance.title'),
    'card-maintenance',
    figures(
      figure(t('maintenance.passes'), fmt.count(num(m?.passes)), 'runtime.agent.maintenance.passes'),
      figure(
        t('maintenance.repaired'),
        fmt.count(num(m?.cheap?.repaired)),
        'runtime.agent.maintenance.cheap.repaired',
      ),
      figure(
        t('maintenance.archived'),
        fmt.count(num(m?.cheap?.archived)),
        'runtime.agent.maintenance.cheap.archived',
      ),
      figure(
        t('maintenance.pruned'),
        fmt.count(num(m?.cheap?.pruned)),
        'runtime.agent.maintenance.cheap.pruned',
      ),
      figure(
        t('maintenance.modelCalls'),
        fmt.count(num(m?.heavy?.modelCalls)),
        'runtime.agent.maintenance.heavy.modelCalls',
      ),
      figure(
        t('maintenance.inputTokens'),
        fmt.count(num(m?.heavy?.inputTokens)),
        'runtime.agent.maintenance.heavy.inputTokens',
      ),
    ),
    el(
      'div',
      { class: 'split' },
      el(
        'div',
        {},
        subheading(t('maintenance.cheap')),
        chips(
          t,
          fmt,
          'phaseOutcome',
          PHASE_OUTCOMES,
          m?.cheap?.outcomes,
          'runtime.agent.maintenance.cheap.outcomes',
          outcomeTone,
        ),
      ),
      el(
        'div',
        {},
        subheading(t('maintenance.heavy')),
        chips(
          t,
          fmt,
          'phaseOutcome',
          PHASE_OUTCOMES,
          m?.heavy?.outcomes,
          'runtime.agent.maintenance.heavy.outcomes',
          outcomeTone,
        ),
      ),
    ),
    subheading(t('maintenance.steps')),
    stepTable,
    distributionLine(
      t,
      t('maintenance.duration'),
      m?.duration,
      fmt.duration,
      'runtime.agent.maintenance.duration',
    ),
  );
}

function renderBackground(dto: HealthDto, ctx: RenderContext): HTMLElement {
  const agent = dto.runtime.agent;
  return section(
    'background',
    ctx.t('section.background'),
    ctx.t('section.background.hint'),
    el('div', { class: 'grid grid-2' }, renderExtraction(agent, ctx), renderEmbedding(agent, ctx)),
    el('div', { class: 'grid grid-1' }, renderMaintenance(agent, ctx)),
  );
}

// -------------------------------------------------------------------------------------------------------
// Process-wide

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
  counts: (kind: ProviderKey) => Readonly<Record<string, number>> | undefined,
  metric: (kind: ProviderKey) => string,
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
        ...PROVIDERS.map((kind) => el('th', { scope: 'col', class: 'num' }, label(ctx.t, 'provider', kind))),
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
          ...PROVIDERS.map((kind) =>
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

function renderProcess(process: Process, ctx: RenderContext): HTMLElement {
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
      ...PROVIDERS.map((kind) => {
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
            ADMISSIONS,
            (kind) => process.providers?.[kind]?.admissions,
            (kind) => `${P}.providers.${kind}.admissions`,
          ),
        ),
        box(
          t('process.races'),
          providerTable(
            ctx,
            'race',
            RACES,
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
          chips(t, fmt, 'warmup', WARMUPS, v?.warmup, `${P}.vectorStores.warmup`, (key) =>
            key === 'failed' ? 'bad' : 'neutral',
          ),
        ),
        box(
          t('process.statements'),
          chips(t, fmt, 'statement', STATEMENTS, process.store?.statements, `${P}.store.statements`),
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

/** Renders every section of the page for one DTO. */
export function renderHealth(dto: HealthDto, ctx: RenderContext): HTMLElement {
  return el(
    'div',
    { class: 'sections' },
    renderStore(dto, ctx),
    renderRetrieval(dto, ctx),
    renderBackground(dto, ctx),
    renderProcess(dto.runtime.process, ctx),
    el(
      'footer',
      { class: 'page-footer' },
      el('p', { class: 'privacy' }, ctx.t('app.privacy')),
      el(
        'p',
        { class: 'meta' },
        ctx.t('app.footer', {
          time: ctx.fmt.dateTime(num(dto.runtime.generatedAt)),
          version: num(dto.runtime.schemaVersion) ?? EM_DASH,
          capacity: ctx.fmt.count(num(dto.runtime.process?.collector?.sampleCapacity)),
        }),
      ),
    ),
  );
}

/** A structural check of the fetched JSON before rendering (the server validated it fully). */
export function isHealthDto(value: unknown): value is HealthDto {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as {
    store?: { totals?: unknown };
    runtime?: { schemaVersion?: unknown; agent?: unknown; process?: unknown };
  };
  return (
    typeof v.store?.totals === 'object' &&
    v.store.totals !== null &&
    v.runtime?.schemaVersion === 1 &&
    typeof v.runtime.agent === 'object' &&
    v.runtime.agent !== null &&
    typeof v.runtime.process === 'object' &&
    v.runtime.process !== null
  );
}
