/** The background-work section: extraction, the embedding drain and maintenance passes of one agent. */
import type { HealthDto } from '@engram/contracts';
import {
  DRAIN_TRANSITIONS,
  EXTRACTION_DECISIONS,
  EXTRACTION_OUTCOMES,
  MAINTENANCE_STEPS,
  PHASE_OUTCOMES,
} from './contracts/enums.js';
import { el } from './dom.js';
import {
  type Agent,
  card,
  chips,
  distributionLine,
  figure,
  figures,
  label,
  num,
  type RenderContext,
  read,
  section,
  subheading,
} from './render-kit.js';

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
    chips(t, fmt, 'decision', EXTRACTION_DECISIONS, x?.decisions, 'runtime.agent.extraction.decisions'),
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
    chips(
      t,
      fmt,
      'transition',
      DRAIN_TRANSITIONS,
      e?.transitions,
      'runtime.agent.embedding.transitions',
      (key) => (key === 'ready' ? 'ok' : key === 'error' ? 'bad' : key === 'stale' ? 'warn' : 'neutral'),
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
      ...MAINTENANCE_STEPS.map((step) => {
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

export function renderBackground(dto: HealthDto, ctx: RenderContext): HTMLElement {
  const agent = dto.runtime.agent;
  return section(
    'background',
    ctx.t('section.background'),
    ctx.t('section.background.hint'),
    el('div', { class: 'grid grid-2' }, renderExtraction(agent, ctx), renderEmbedding(agent, ctx)),
    el('div', { class: 'grid grid-1' }, renderMaintenance(agent, ctx)),
  );
}
