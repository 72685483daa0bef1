/**
 * Renders the health DTO into DOM nodes, one module per section of the page; the shared building blocks
 * live in `render-kit.ts`.
 */
import type { HealthDto } from '@engram/contracts';
import { el } from './dom.js';
import { EM_DASH } from './format.js';
import { renderBackground } from './render-background.js';
import type { RenderContext } from './render-kit.js';
import { num } from './render-kit.js';
import { renderProcess } from './render-process.js';
import { renderProcesses } from './render-processes.js';
import { renderRetrieval } from './render-retrieval.js';
import { renderStore } from './render-store.js';

export type { RenderContext };

/** Renders every section of the page for one DTO. */
export function renderHealth(dto: HealthDto, ctx: RenderContext): HTMLElement {
  return el(
    'div',
    { class: 'sections' },
    renderStore(dto, ctx),
    dto.processes === undefined ? null : renderProcesses(dto.processes, ctx),
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
