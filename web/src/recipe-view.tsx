import { Fragment } from 'preact';
import { isMap, parseDocument } from 'yaml';
import { type Api, ApiError, type Scope } from './api.js';
import { shortInstant } from './format.js';
import { useLoad } from './hooks.js';
import { routeHash } from './route.js';

/** The built-in recipe every project has without a document (its engine runs nothing). */
const BUILT_IN = 'noop';

interface Found {
  readonly project: string;
  readonly path: string;
  readonly body: string;
  readonly version: number;
  readonly updatedAt: string;
}

/**
 * A recipe's document as the cascade resolves it: the project's own, else `_tenant`'s; undefined
 * when neither has one (a built-in, or a missing recipe).
 */
async function resolveRecipe(api: Api, scope: Scope, name: string): Promise<Found | undefined> {
  const path = `_vance/recipes/${name}.yaml`;
  for (const project of [scope.project, '_tenant']) {
    try {
      const doc = await api.document({ tenant: scope.tenant, project }, path);
      return { project, path, body: doc.body, version: doc.version, updatedAt: doc.updatedAt };
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
  return undefined;
}

/** The fields people ask about first: what runs it and what it runs, as text. */
function facts(body: string): [string, string][] {
  const doc = parseDocument(body);
  if (!isMap(doc.contents)) return [];
  const value = doc.toJS() as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  return (
    [
      ['Description', value.description],
      ['Engine', value.engine],
      ['Command', Array.isArray(value.command) ? value.command.map(text).join(' ') : value.command],
      ['URL', value.url],
      ['Timeout', value.timeout],
      ['Params', value.params],
    ] as [string, unknown][]
  )
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, text(v)]);
}

/** One recipe, read-only (issue #23): where it comes from, its engine, command or URL, and its text. */
export function RecipeView({ api, scope, name }: { api: Api; scope: Scope; name: string }) {
  const recipe = useLoad(() => resolveRecipe(api, scope, name), `${scope.tenant}/${scope.project}/${name}`);
  const found = recipe.data;
  return (
    <section class="recipe-view" aria-labelledby="recipe-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={routeHash({ view: 'list', ...scope })}>
          {scope.tenant}/{scope.project}
        </a>{' '}
        / <span aria-current="page">recipe {name}</span>
      </nav>
      <h1 id="recipe-title">Recipe {name}</h1>
      {recipe.error !== undefined && (
        <p class="error" role="alert">
          {recipe.error.message} [{recipe.error.code}]
        </p>
      )}
      {recipe.loading && found === undefined && <p>Loading…</p>}
      {!recipe.loading && recipe.error === undefined && found === undefined && (
        <p>
          {name === BUILT_IN
            ? 'The built-in recipe noop: its engine starts no program and calls nothing; each run completes at once.'
            : `Neither ${scope.project} nor _tenant has a recipe ${name}: a run of it fails until one is written.`}
        </p>
      )}
      {found !== undefined && (
        <>
          <p class="muted">
            <code>
              {found.project}/{found.path}
            </code>{' '}
            · version {found.version} · updated {shortInstant(found.updatedAt)}
            {found.project !== scope.project && ' · from _tenant, shared by every project'}
          </p>
          <dl class="facts">
            {facts(found.body).map(([k, v]) => (
              <Fragment key={k}>
                <dt>{k}</dt>
                <dd>
                  <code>{v}</code>
                </dd>
              </Fragment>
            ))}
          </dl>
          <h2>Document (read-only)</h2>
          <pre class="code">{found.body}</pre>
        </>
      )}
    </section>
  );
}
