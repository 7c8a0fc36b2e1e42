/**
 * Where the page is, kept in the URL's hash so the back button, reloads and links work:
 * `#/p/<tenant>/<project>` (listing), `…/new`, `…/s/<name>` (editor), `…/s/<name>/run/<id>`,
 * `…/s/<name>/process/<id>`, `…/s/<name>/session/<id>`, `…/trash`, `…/recipe/<name>`, `#/inbox/<tenant>`.
 */
export type Route =
  | { readonly view: 'list'; readonly tenant: string; readonly project: string }
  | { readonly view: 'new'; readonly tenant: string; readonly project: string }
  | { readonly view: 'edit'; readonly tenant: string; readonly project: string; readonly name: string }
  | {
      readonly view: 'run' | 'process' | 'session';
      readonly tenant: string;
      readonly project: string;
      readonly name: string;
      readonly id: string;
    }
  | { readonly view: 'inbox'; readonly tenant: string; readonly project: string }
  | { readonly view: 'trash'; readonly tenant: string; readonly project: string }
  | { readonly view: 'recipe'; readonly tenant: string; readonly project: string; readonly name: string };

const enc = encodeURIComponent;

function dec(part: string | undefined): string {
  try {
    return decodeURIComponent(part ?? '');
  } catch {
    return '';
  }
}

export function parseRoute(hash: string, fallback: { tenant: string; project: string }): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  const [head, a, b, c, d, e, f] = parts;
  if (head === 'inbox')
    return { view: 'inbox', tenant: dec(a) || fallback.tenant, project: fallback.project };
  if (head !== 'p' || !a || !b) return { view: 'list', ...fallback };
  const scope = { tenant: dec(a), project: dec(b) };
  if (c === 'new') return { view: 'new', ...scope };
  if (c === 'trash') return { view: 'trash', ...scope };
  if (c === 'recipe' && d) return { view: 'recipe', ...scope, name: dec(d) };
  if (c === 's' && d) {
    const name = dec(d);
    if ((e === 'run' || e === 'process' || e === 'session') && f)
      return { view: e, ...scope, name, id: dec(f) };
    return { view: 'edit', ...scope, name };
  }
  return { view: 'list', ...scope };
}

export function routeHash(route: Route): string {
  const base = `#/p/${enc(route.tenant)}/${enc(route.project)}`;
  switch (route.view) {
    case 'list':
      return base;
    case 'new':
      return `${base}/new`;
    case 'edit':
      return `${base}/s/${enc(route.name)}`;
    case 'run':
    case 'process':
    case 'session':
      return `${base}/s/${enc(route.name)}/${route.view}/${enc(route.id)}`;
    case 'inbox':
      return `#/inbox/${enc(route.tenant)}`;
    case 'trash':
      return `${base}/trash`;
    case 'recipe':
      return `${base}/recipe/${enc(route.name)}`;
  }
}
