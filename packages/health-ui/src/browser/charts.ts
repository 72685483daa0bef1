/**
 * Inline SVG charts built with DOM APIs: a latency chart per retrieval purpose (p50, p95 and max of each
 * stage as nested bars on a shared scale), stacked share bars and single meters. Colours come from CSS
 * classes; labels are HTML text next to the SVG so they stay crisp at any width.
 */
import { el, svg } from './dom.js';
import { EM_DASH, type Formatter, isPresent } from './format.js';
import type { Translate } from './i18n.js';

/** One nested-bar row of a latency chart. */
export interface LatencyRow {
  readonly label: string;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly max: number | null;
  /** `data-metric` prefix of the row (the stage path). */
  readonly metric: string;
}

/** A segment of a stacked share bar. */
export interface ShareSegment {
  readonly label: string;
  readonly value: number;
  /** CSS class of the segment's colour. */
  readonly tone: string;
}

/** Rounds a scale maximum up to 1, 2, 2.5 or 5 × 10ⁿ, so ticks read well. */
export function niceCeiling(value: number): number {
  if (!Number.isFinite(value) || value <= 0) return 1;
  const exponent = Math.floor(Math.log10(value));
  const base = 10 ** exponent;
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (value <= step * base * (1 + 1e-9)) return step * base;
  }
  return 10 * base;
}

function percent(value: number, scale: number): number {
  return Math.max(0, Math.min(100, (value / scale) * 100));
}

function rowBar(row: LatencyRow, scale: number): SVGSVGElement {
  const bars: SVGElement[] = [];
  for (const x of [25, 50, 75]) {
    bars.push(
      svg('line', { x1: x, x2: x, y1: 0, y2: 16, class: 'grid', 'vector-effect': 'non-scaling-stroke' }),
    );
  }
  const layers: readonly [number | null, string][] = [
    [row.max, 'bar-max'],
    [row.p95, 'bar-p95'],
    [row.p50, 'bar-p50'],
  ];
  for (const [value, tone] of layers) {
    if (!isPresent(value)) continue;
    // A real but tiny sample still gets a visible sliver.
    const width = Math.max(percent(value, scale), value > 0 ? 0.6 : 0.3);
    bars.push(svg('rect', { x: 0, y: 3, width: width.toFixed(3), height: 10, class: tone }));
  }
  return svg(
    'svg',
    {
      class: 'bar',
      viewBox: '0 0 100 16',
      preserveAspectRatio: 'none',
      'aria-hidden': 'true',
      focusable: 'false',
    },
    ...bars,
  );
}

/** A latency chart: one row per stage with nested p50/p95/max bars, a shared axis and a legend. */
export function latencyChart(rows: readonly LatencyRow[], t: Translate, fmt: Formatter): HTMLElement {
  const highest = Math.max(0, ...rows.map((r) => (isPresent(r.max) ? r.max : 0)));
  const scale = niceCeiling(highest);
  const hasSamples = rows.some((r) => isPresent(r.max));
  const body = el(
    'div',
    { class: 'chart-rows' },
    el('span', {}),
    el('span', {}),
    el('span', { class: 'chart-column' }, t('table.p95')),
  );
  for (const row of rows) {
    body.append(
      el('div', { class: 'chart-label' }, row.label),
      rowBar(row, scale),
      el('div', { class: 'chart-value', 'data-chart': `${row.metric}.p95` }, fmt.ms(row.p95)),
    );
  }
  const axis = el(
    'div',
    { class: 'chart-axis' },
    el('span', {}),
    el(
      'div',
      { class: 'chart-ticks' },
      el('span', {}, hasSamples ? fmt.msCompact(0) : EM_DASH),
      el('span', {}, hasSamples ? fmt.msCompact(scale / 2) : ''),
      el('span', {}, hasSamples ? fmt.msCompact(scale) : ''),
    ),
    el('span', {}),
  );
  const legend = el(
    'div',
    { class: 'legend', title: t('chart.legend') },
    ...(
      [
        ['bar-p50', t('dist.p50')],
        ['bar-p95', t('dist.p95')],
        ['bar-max', t('dist.max')],
      ] as const
    ).map(([tone, label]) => el('span', { class: 'legend-item' }, swatch(tone), label)),
  );
  return el(
    'figure',
    { class: hasSamples ? 'chart' : 'chart chart-empty', 'aria-label': t('retrieval.latency') },
    body,
    axis,
    legend,
  );
}

/** A small coloured square for legends. */
export function swatch(tone: string): SVGSVGElement {
  return svg(
    'svg',
    { class: 'swatch', viewBox: '0 0 10 10', 'aria-hidden': 'true', focusable: 'false' },
    svg('rect', { x: 0, y: 0, width: 10, height: 10, rx: 2, class: tone }),
  );
}

/** A horizontal bar split into coloured segments proportional to their values (an empty track when all are 0). */
export function shareBar(segments: readonly ShareSegment[]): SVGSVGElement {
  const total = segments.reduce((sum, s) => sum + (isPresent(s.value) ? s.value : 0), 0);
  const parts: SVGElement[] = [svg('rect', { x: 0, y: 0, width: 100, height: 10, class: 'track' })];
  let x = 0;
  if (total > 0) {
    for (const segment of segments) {
      if (!isPresent(segment.value) || segment.value === 0) continue;
      const width = (segment.value / total) * 100;
      parts.push(
        svg(
          'rect',
          { x: x.toFixed(3), y: 0, width: width.toFixed(3), height: 10, class: segment.tone },
          svg('title', {}, segment.label),
        ),
      );
      x += width;
    }
  }
  return svg(
    'svg',
    { class: 'share', viewBox: '0 0 100 10', preserveAspectRatio: 'none', role: 'img', focusable: 'false' },
    ...parts,
  );
}

/** A single meter: `value` of `max` as a filled bar. */
export function meter(value: number, max: number, tone: string): SVGSVGElement {
  const width = max > 0 && isPresent(value) ? percent(value, max) : 0;
  return svg(
    'svg',
    {
      class: 'meter',
      viewBox: '0 0 100 8',
      preserveAspectRatio: 'none',
      'aria-hidden': 'true',
      focusable: 'false',
    },
    svg('rect', { x: 0, y: 0, width: 100, height: 8, class: 'track' }),
    width > 0
      ? svg('rect', { x: 0, y: 0, width: Math.max(width, 0.8).toFixed(3), height: 8, class: tone })
      : null,
  );
}
