/**
 * The processes section: one row per live process using the store (a random id, never a pid or host name;
 * when it started and last published; its searches, search latency, degradations and queues), from the
 * figures each process publishes into the store. Only numbers and the id's first hex digits are shown.
 */
import type { HealthDto } from '@engram/contracts';
import { DEGRADATION_CAUSES, RETRIEVAL_PURPOSES } from './contracts/enums.js';
import { el } from './dom.js';
import { EM_DASH } from './format.js';
import type { MessageKey } from './messages.js';
import { num, type RenderContext, read, section } from './render-kit.js';

type Processes = NonNullable<HealthDto['processes']>;
type ProcessRow = Processes['list'][number];

/** Searches and degradations summed over the purposes. */
function totals(row: ProcessRow): { readonly searches: number; readonly degradations: number } {
  let searches = 0;
  let degradations = 0;
  for (const purpose of RETRIEVAL_PURPOSES) {
    const data = row.runtime.agent.retrieval?.[purpose];
    searches += num(data?.operations) ?? 0;
    for (const cause of DEGRADATION_CAUSES) degradations += read(data?.degradations, cause) ?? 0;
  }
  return { searches, degradations };
}

const COLUMNS: readonly MessageKey[] = [
  'processes.id',
  'processes.started',
  'processes.lastBeat',
  'processes.searches',
  'processes.searchP50',
  'processes.searchP95',
  'processes.degradations',
  'processes.queue',
  'processes.backlog',
];

function cell(text: string, metric: string, derived = false): HTMLElement {
  return el(
    'td',
    {
      class: text === EM_DASH ? 'num missing' : 'num',
      [derived ? 'data-derived' : 'data-metric']: metric,
    },
    text,
  );
}

function processRow(row: ProcessRow, index: number, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const base = `processes.list.${index}`;
  const search = row.runtime.agent.retrieval?.search?.latency?.total;
  const sums = totals(row);
  const process = row.runtime.process;
  return el(
    'tr',
    { class: row.self ? 'self' : null, 'data-process': row.id },
    el(
      'th',
      { scope: 'row' },
      el('code', { 'data-derived': `${base}.id` }, row.id.slice(0, 8)),
      row.self ? el('span', { class: 'tag' }, ` ${t('processes.self')}`) : null,
    ),
    cell(fmt.time(num(row.startedAt)), `${base}.startedAt`, true),
    cell(fmt.time(num(row.beatAt)), `${base}.beatAt`, true),
    cell(fmt.count(sums.searches), `${base}.searches`, true),
    cell(fmt.ms(num(search?.p50)), `${base}.runtime.agent.retrieval.search.latency.total.p50`),
    cell(fmt.ms(num(search?.p95)), `${base}.runtime.agent.retrieval.search.latency.total.p95`),
    cell(fmt.count(sums.degradations), `${base}.degradations`, true),
    cell(fmt.count(num(process?.extractionQueue?.depth)), `${base}.runtime.process.extractionQueue.depth`),
    cell(fmt.count(num(process?.embeddingBacklog?.total)), `${base}.runtime.process.embeddingBacklog.total`),
  );
}

/** The processes section of the page. */
export function renderProcesses(processes: Processes, ctx: RenderContext): HTMLElement {
  const { t, fmt } = ctx;
  const skipped = num(processes.skipped) ?? 0;
  return section(
    'processes',
    t('section.processes'),
    t('section.processes.hint'),
    ctx.agentId === null ? null : el('p', { class: 'quiet' }, t('processes.agentNote')),
    el(
      'table',
      { class: 'latency-table processes-table' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...COLUMNS.map((key, i) => el('th', { scope: 'col', class: i === 0 ? null : 'num' }, t(key))),
        ),
      ),
      el('tbody', {}, ...processes.list.map((row, i) => processRow(row, i, ctx))),
    ),
    skipped === 0
      ? null
      : el(
          'p',
          { class: 'quiet', 'data-derived': 'processes.skipped' },
          t('processes.skipped', { count: fmt.count(skipped) }),
        ),
  );
}
