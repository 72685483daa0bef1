import { esc, href } from './html.js';
import type { Locale, Translate } from './i18n.js';
import type { MessageKey } from './messages.js';

/** The pages of the navigation. */
export type NavKey = 'memories' | 'search' | 'conflicts' | 'session' | 'backlog';

const NAV: readonly (readonly [NavKey, string])[] = [
  ['memories', ''],
  ['search', 'search'],
  ['conflicts', 'conflicts'],
  ['session', 'session'],
  ['backlog', 'backlog'],
];

/** The scope a page shows: an agent and optionally one of its users. */
export interface PageScope {
  readonly agentId: string;
  readonly userId: string | null;
}

/** What every page needs to render: language, scope, the form token, and where it is. */
export interface PageContext {
  readonly t: Translate;
  readonly locale: Locale;
  readonly scope: PageScope;
  /** The form token every POST form carries. */
  readonly csrf: string;
  /** The route below the base path without the leading slash (`''` for the memories list). */
  readonly route: string;
  /** The request's query (for the language links, which keep it). */
  readonly query: URLSearchParams;
}

/** Query parameters that carry the scope from page to page. */
export function scopeParams(scope: PageScope): Record<string, string | null> {
  return { agent: scope.agentId, user: scope.userId };
}

/** The hidden fields that carry the scope and the form token in a POST form. */
export function hiddenScope(ctx: PageContext): string {
  return [
    `<input type="hidden" name="agent" value="${esc(ctx.scope.agentId)}">`,
    ctx.scope.userId === null ? '' : `<input type="hidden" name="user" value="${esc(ctx.scope.userId)}">`,
    `<input type="hidden" name="csrf" value="${esc(ctx.csrf)}">`,
  ].join('');
}

function langLinks(ctx: PageContext): string {
  const links = (['en', 'zh-CN'] as const).map((lang) => {
    const params: Record<string, string> = {};
    for (const [k, v] of ctx.query) if (k !== 'lang' && k !== 'token') params[k] = v;
    params.lang = lang;
    const current = lang === ctx.locale ? ' aria-current="true"' : '';
    return `<a class="lang" data-testid="lang-${lang}" href="${href(ctx.route, params)}"${current}>${esc(ctx.t(`lang.${lang}` as MessageKey))}</a>`;
  });
  return `<nav class="langs" aria-label="language">${links.join('')}</nav>`;
}

function scopeForm(ctx: PageContext): string {
  const { t, scope } = ctx;
  return `<form class="scope" method="get" action="./${esc(ctx.route)}">
<label>${esc(t('scope.agent'))} <input name="agent" data-testid="scope-agent" value="${esc(scope.agentId)}" maxlength="256"></label>
<label>${esc(t('scope.user'))} <input name="user" data-testid="scope-user" value="${esc(scope.userId ?? '')}" placeholder="${esc(t('scope.userNone'))}" maxlength="256"></label>
<button type="submit">${esc(t('scope.apply'))}</button>
</form>`;
}

/** A whole page: header with navigation, scope and language, then the body (already safe HTML). */
export function layout(ctx: PageContext, active: NavKey | null, title: string, body: string): string {
  const { t } = ctx;
  const nav = NAV.map(([key, path]) => {
    const current = key === active ? ' aria-current="page"' : '';
    return `<a data-testid="nav-${key}" href="${href(path, scopeParams(ctx.scope))}"${current}>${esc(t(`nav.${key}` as MessageKey))}</a>`;
  }).join('');
  return `<!doctype html>
<html lang="${esc(ctx.locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="color-scheme" content="light">
<title>${esc(title)} · ${esc(t('app.title'))}</title>
<link rel="icon" href="./favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="./inspector.css">
</head>
<body>
<header class="top">
<div class="brand"><h1>${esc(t('app.title'))}</h1><p class="muted">${esc(t('app.subtitle'))}</p></div>
${langLinks(ctx)}
</header>
<nav class="tabs">${nav}</nav>
${scopeForm(ctx)}
<main>
<h2 data-testid="page-title">${esc(title)}</h2>
${body}
</main>
<footer class="muted">${esc(t('app.local'))}</footer>
</body>
</html>`;
}

/** A bare page for an answer without content (refused, not found): no scope, no navigation. */
export function plainPage(locale: Locale, t: Translate, message: string): string {
  return `<!doctype html>
<html lang="${esc(locale)}">
<head><meta charset="utf-8"><meta name="referrer" content="same-origin"><title>${esc(t('app.title'))}</title>
<link rel="stylesheet" href="./inspector.css"></head>
<body><main><h1>${esc(t('app.title'))}</h1><p class="notice" data-testid="notice">${esc(message)}</p></main></body>
</html>`;
}
