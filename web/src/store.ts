/**
 * What the page keeps in the browser: the token in session storage only (entered once per tab,
 * gone when the tab closes), the last tenant and project there too, and the names of tenants and
 * projects used before (no secrets) in local storage for the pickers.
 */

const TOKEN = 'ursa.token';
const SCOPE = 'ursa.scope';
const RECENT = 'ursa.recent';

function session(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

function local(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

export function loadToken(): string {
  return session()?.getItem(TOKEN) ?? '';
}

export function saveToken(token: string): void {
  if (token === '') session()?.removeItem(TOKEN);
  else session()?.setItem(TOKEN, token);
}

export interface ScopeNames {
  readonly tenant: string;
  readonly project: string;
}

export const DEFAULT_SCOPE: ScopeNames = { tenant: 'default', project: 'demo' };

export function loadScope(): ScopeNames {
  try {
    const value = JSON.parse(session()?.getItem(SCOPE) ?? 'null') as Partial<ScopeNames> | null;
    if (typeof value?.tenant === 'string' && typeof value.project === 'string') {
      return { tenant: value.tenant, project: value.project };
    }
  } catch {
    // A damaged entry is as good as none.
  }
  return DEFAULT_SCOPE;
}

export function saveScope(scope: ScopeNames): void {
  session()?.setItem(SCOPE, JSON.stringify(scope));
  const recent = loadRecent();
  const add = (list: readonly string[], name: string) =>
    [name, ...list.filter((n) => n !== name)].slice(0, 20);
  local()?.setItem(
    RECENT,
    JSON.stringify({
      tenants: add(recent.tenants, scope.tenant),
      projects: add(recent.projects, scope.project),
    }),
  );
}

export function loadRecent(): { tenants: string[]; projects: string[] } {
  try {
    const value = JSON.parse(local()?.getItem(RECENT) ?? 'null') as {
      tenants?: unknown;
      projects?: unknown;
    } | null;
    const names = (list: unknown) =>
      Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string') : [];
    return { tenants: names(value?.tenants), projects: names(value?.projects) };
  } catch {
    return { tenants: [], projects: [] };
  }
}

let flash = '';

/** A message for the next view to show (e.g. "Created …" after a new scheduler's page opens). */
export function setFlash(text: string): void {
  flash = text;
}

/** The message for this view, once. */
export function takeFlash(): string {
  const text = flash;
  flash = '';
  return text;
}
