/**
 * The page's entry module: builds the toolbar, reads `./api/agents` and `./api/health?agent=…` on load, on
 * the refresh button and on the optional auto-refresh interval (no push channel), and renders the DTO.
 */
import type { HealthDto } from '@engram/contracts';
import { type ErrorKey, fetchJson } from './api.js';
import { el, replaceChildren, svg } from './dom.js';
import { createFormatter } from './format.js';
import { createTranslator, isLocale, LOCALES, type Locale, resolveLocale } from './i18n.js';
import type { MessageKey } from './messages.js';
import { isHealthDto, renderHealth } from './render.js';

const LANGUAGE_NAMES: Readonly<Record<Locale, MessageKey>> = { en: 'lang.en', 'zh-CN': 'lang.zh-CN' };
const REFRESH_CHOICES: readonly number[] = [0, 5, 15, 60];
const STORAGE_KEY = 'engram-health-ui.lang';

interface State {
  locale: Locale;
  agentId: string | null;
  agents: readonly string[];
  dto: HealthDto | null;
  error: ErrorKey | null;
  loading: boolean;
  refreshSeconds: number;
}

function storedLocale(): Locale | null {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return isLocale(value) ? value : null;
  } catch {
    return null;
  }
}

function storeLocale(locale: Locale): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, locale);
  } catch {
    // Storage may be disabled; the URL still carries the choice.
  }
}

function initialState(): State {
  const params = new URLSearchParams(window.location.search);
  const lang = params.get('lang');
  const agent = params.get('agent');
  const refresh = Number(params.get('refresh') ?? '0');
  return {
    locale: isLocale(lang)
      ? lang
      : (storedLocale() ?? resolveLocale(navigator.languages ?? [navigator.language])),
    agentId: agent === null || agent === '' ? null : agent,
    agents: [],
    dto: null,
    error: null,
    loading: false,
    refreshSeconds: REFRESH_CHOICES.includes(refresh) ? refresh : 0,
  };
}

function logo(): SVGSVGElement {
  return svg(
    'svg',
    { class: 'logo', viewBox: '0 0 32 32', 'aria-hidden': 'true', focusable: 'false' },
    svg('rect', { x: 1, y: 1, width: 30, height: 30, rx: 8, class: 'logo-bg' }),
    svg('path', { d: 'M8 20 L12 14 L16 17 L20 10 L24 13', class: 'logo-line' }),
    svg('circle', { cx: 20, cy: 10, r: 2, class: 'logo-dot' }),
  );
}

function start(root: HTMLElement): void {
  const state = initialState();
  let sequence = 0;
  let timer: ReturnType<typeof setInterval> | null = null;

  const title = el('h1', { class: 'title' });
  const subtitle = el('p', { class: 'subtitle' });
  const agentLabel = el('span', { class: 'control-label' });
  const agentSelect = el('select', { class: 'select', 'data-testid': 'agent-select', id: 'agent-select' });
  const languageLabel = el('span', { class: 'control-label' });
  const languageButtons = LOCALES.map((locale) =>
    el('button', {
      type: 'button',
      class: 'segment',
      'data-locale': locale,
      'data-testid': `lang-${locale}`,
    }),
  );
  const refreshButton = el('button', { type: 'button', class: 'button primary', 'data-testid': 'refresh' });
  const autoLabel = el('span', { class: 'control-label' });
  const autoSelect = el('select', { class: 'select', 'data-testid': 'auto-refresh' });
  const scope = el('span', { class: 'scope', 'data-testid': 'scope' });
  const status = el('span', {
    class: 'status',
    role: 'status',
    'aria-live': 'polite',
    'data-testid': 'status',
  });
  const notice = el('p', { class: 'notice', hidden: true, 'data-testid': 'notice' });
  const content = el('main', { class: 'content', 'data-testid': 'content' });

  const header = el(
    'header',
    { class: 'topbar' },
    el('div', { class: 'brand' }, logo(), el('div', {}, title, subtitle)),
    el(
      'div',
      { class: 'controls' },
      el('label', { class: 'control' }, agentLabel, agentSelect),
      el(
        'div',
        { class: 'control' },
        languageLabel,
        el('div', { class: 'segmented', role: 'group' }, ...languageButtons),
      ),
      el('label', { class: 'control' }, autoLabel, autoSelect),
      refreshButton,
    ),
  );
  const statusBar = el('div', { class: 'statusbar' }, scope, status);
  replaceChildren(root, header, el('div', { class: 'page' }, statusBar, notice, content));

  function syncUrl(): void {
    const params = new URLSearchParams();
    params.set('lang', state.locale);
    if (state.agentId !== null) params.set('agent', state.agentId);
    if (state.refreshSeconds > 0) params.set('refresh', String(state.refreshSeconds));
    window.history.replaceState(null, '', `?${params.toString()}`);
  }

  function renderChrome(): void {
    const t = createTranslator(state.locale);
    document.documentElement.lang = state.locale;
    document.title = t('app.title');
    title.textContent = t('app.title');
    subtitle.textContent = t('app.subtitle');
    agentLabel.textContent = t('toolbar.agent');
    languageLabel.textContent = t('toolbar.language');
    autoLabel.textContent = t('toolbar.autoRefresh');
    refreshButton.textContent = t('toolbar.refresh');
    for (const button of languageButtons) {
      const locale = button.dataset.locale;
      if (!isLocale(locale)) continue;
      button.textContent = t(LANGUAGE_NAMES[locale]);
      button.setAttribute('aria-pressed', String(locale === state.locale));
      button.setAttribute('lang', locale);
    }
    const agents = [...state.agents].sort((a, b) => a.localeCompare(b));
    if (state.agentId !== null && !agents.includes(state.agentId)) agents.unshift(state.agentId);
    replaceChildren(
      agentSelect,
      el('option', { value: '' }, t('toolbar.allAgents')),
      ...agents.map((agent) => el('option', { value: agent }, agent)),
    );
    agentSelect.value = state.agentId ?? '';
    replaceChildren(
      autoSelect,
      ...REFRESH_CHOICES.map((seconds) =>
        el(
          'option',
          { value: String(seconds) },
          seconds === 0 ? t('toolbar.autoRefreshOff') : t('toolbar.every', { seconds }),
        ),
      ),
    );
    autoSelect.value = String(state.refreshSeconds);
  }

  function renderContent(): void {
    const t = createTranslator(state.locale);
    const fmt = createFormatter(state.locale, t);
    scope.textContent = state.agentId === null ? t('scope.all') : t('scope.agent', { agent: state.agentId });
    if (state.loading && state.dto === null) status.textContent = t('status.loading');
    else if (state.error !== null) status.textContent = t(state.error);
    else
      status.textContent =
        state.dto === null ? '' : t('status.updated', { time: fmt.time(state.dto.runtime.generatedAt) });
    status.classList.toggle('status-error', state.error !== null);
    const untracked =
      state.dto !== null && state.agentId !== null && state.dto.runtime.agent.tracked !== true;
    notice.hidden = !untracked;
    notice.textContent = untracked ? t('status.notTracked') : '';
    if (state.dto !== null) {
      replaceChildren(
        content,
        renderHealth(state.dto, { locale: state.locale, t, fmt, agentId: state.agentId }),
      );
    } else {
      replaceChildren(content);
    }
    document.body.dataset.state = state.error !== null ? 'error' : state.loading ? 'loading' : 'ready';
    document.body.dataset.locale = state.locale;
    document.body.dataset.agent = state.agentId ?? '';
  }

  async function load(): Promise<void> {
    const mine = ++sequence;
    state.loading = true;
    document.body.dataset.state = 'loading';
    if (state.dto === null) renderContent();
    const query = state.agentId === null ? '' : `?agent=${encodeURIComponent(state.agentId)}`;
    const [agents, health] = await Promise.all([
      fetchJson('./api/agents'),
      fetchJson(`./api/health${query}`),
    ]);
    if (mine !== sequence) return;
    state.loading = false;
    if (agents.ok) {
      const list = (agents.body as { agents?: unknown } | null)?.agents;
      state.agents = Array.isArray(list) ? list.filter((a): a is string => typeof a === 'string') : [];
    }
    if (health.ok && isHealthDto(health.body)) {
      state.dto = health.body;
      state.error = null;
    } else {
      state.error = health.ok ? 'error.invalid' : health.error;
    }
    renderChrome();
    renderContent();
  }

  function schedule(): void {
    if (timer !== null) clearInterval(timer);
    timer = state.refreshSeconds > 0 ? setInterval(() => void load(), state.refreshSeconds * 1000) : null;
  }

  agentSelect.addEventListener('change', () => {
    state.agentId = agentSelect.value === '' ? null : agentSelect.value;
    state.dto = null;
    syncUrl();
    void load();
  });
  for (const button of languageButtons) {
    button.addEventListener('click', () => {
      const locale = button.dataset.locale;
      if (!isLocale(locale) || locale === state.locale) return;
      state.locale = locale;
      storeLocale(locale);
      syncUrl();
      renderChrome();
      renderContent();
    });
  }
  refreshButton.addEventListener('click', () => void load());
  autoSelect.addEventListener('change', () => {
    const seconds = Number(autoSelect.value);
    state.refreshSeconds = REFRESH_CHOICES.includes(seconds) ? seconds : 0;
    syncUrl();
    schedule();
  });

  renderChrome();
  syncUrl();
  schedule();
  void load();
}

const root = document.getElementById('app');
if (root !== null) start(root);
