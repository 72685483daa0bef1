/** The retrieval section: per purpose, a latency chart and table, outcomes, degradations and candidates. */
import type { HealthDto } from '@engram/contracts';
import { latencyChart } from './charts.js';
import {
  CANDIDATE_ARMS,
  DEGRADATION_CAUSES,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
  RETRIEVAL_STAGES,
  type RetrievalPurpose,
} from './contracts/enums.js';
import { el } from './dom.js';
import { EM_DASH } from './format.js';
import {
  type Agent,
  chips,
  label,
  num,
  type RenderContext,
  read,
  section,
  subheading,
} from './render-kit.js';

function renderPurpose(purpose: RetrievalPurpose, agent: Agent, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const data = agent.retrieval?.[purpose];
  const base = `runtime.agent.retrieval.${purpose}`;
  const rows = RETRIEVAL_STAGES.map((stage) => {
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
  const degradedKeys = DEGRADATION_CAUSES.filter((key) => (read(data?.degradations, key) ?? 0) > 0);
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
    ...CANDIDATE_ARMS.map((key) =>
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
    chips(t, fmt, 'outcome', RETRIEVAL_OUTCOMES, data?.outcomes, `${base}.outcomes`, (key) =>
      key === 'completed' ? 'ok' : key === 'failed' ? 'bad' : 'neutral',
    ),
    subheading(t('retrieval.degradations')),
    degradations,
    subheading(t('retrieval.candidates')),
    candidates,
  );
}

export function renderRetrieval(dto: HealthDto, ctx: RenderContext): HTMLElement {
  const agent = dto.runtime.agent;
  return section(
    'retrieval',
    ctx.t('section.retrieval'),
    ctx.t('section.retrieval.hint'),
    el(
      'div',
      { class: 'grid grid-2' },
      ...RETRIEVAL_PURPOSES.map((purpose) => renderPurpose(purpose, agent, ctx)),
    ),
  );
}
