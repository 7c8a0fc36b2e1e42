import { stringify } from 'yaml';
import { findRecipe as findRecipeIn } from '../catalog/catalog.js';
import type { RecipeDetail, RecipeList, RecipeSummary } from '../contract/index.js';
import { isRefusal, UrsaError } from '../errors/index.js';
import { BUILTIN_RECIPES } from '../recipes/builtin.js';
import { parseRecipeDocument } from '../recipes/parse.js';
import { RECIPE_PREFIX, recipePath } from '../recipes/paths.js';
import type { RecipeDefinition } from '../recipes/recipe.js';
import type { Runtime } from '../runtime/context.js';
import { type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
import { formatInstant } from '../time/instant.js';
import type { Caller, VersionGuard } from './caller.js';
import { putNamedDocument, trashNamedDocument } from './named-documents.js';

/**
 * The recipe `name` as (tenant, project) resolves it (decisions §2): the project's own, else
 * `_tenant`'s, else the built-in one; undefined when none has it.
 *
 * @throws UrsaError the recipe parser's refusal (e.g. `RECIPE_INVALID`) when the document found is broken:
 *   a broken recipe is an error, never a silent fallback to the next level.
 */
export function findRecipe(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  name: string,
): Promise<RecipeDefinition | undefined> {
  return findRecipeIn(rt.repos, tenant, project, name);
}

/** A recipe document of the cascade: where it is, and its recipe or why it does not load. */
interface Found {
  readonly document: StoredDocument;
  readonly source: 'project' | 'tenant';
  readonly recipe: RecipeDefinition | undefined;
  readonly invalid: string | undefined;
}

const nameOf = (path: string) => path.slice(RECIPE_PREFIX.length, -'.yaml'.length);

/** Parses a stored recipe document; a refusal becomes its message (a document is not a request). */
function load(document: StoredDocument, source: 'project' | 'tenant'): Found {
  try {
    const recipe = parseRecipeDocument(document.body, {
      name: nameOf(document.path),
      path: `${document.project}/${document.path}`,
      source,
    });
    return { document, source, recipe, invalid: undefined };
  } catch (error) {
    if (!isRefusal(error)) throw error;
    return { document, source, recipe: undefined, invalid: error.message };
  }
}

/** The recipe documents of the caller's project and `_tenant`'s, by name, the project's over `_tenant`'s. */
async function documentsOf(rt: Pick<Runtime, 'repos'>, caller: Caller): Promise<Map<string, Found>> {
  const { tenant, project } = caller;
  const own = project === TENANT_PROJECT ? 'tenant' : 'project';
  const [shared, mine] = await Promise.all([
    project === TENANT_PROJECT ? [] : rt.repos.documents.list(tenant, TENANT_PROJECT, RECIPE_PREFIX),
    rt.repos.documents.list(tenant, project, RECIPE_PREFIX),
  ]);
  const found = new Map<string, Found>();
  for (const d of shared) if (d.path.endsWith('.yaml')) found.set(nameOf(d.path), load(d, 'tenant'));
  for (const d of mine) if (d.path.endsWith('.yaml')) found.set(nameOf(d.path), load(d, own));
  return found;
}

function summaryOf(recipe: RecipeDefinition, document: StoredDocument | undefined): RecipeSummary {
  return {
    name: recipe.name,
    description: recipe.description,
    engine: recipe.engine,
    source: recipe.source,
    path: document?.path ?? null,
    version: document?.version ?? null,
    updatedAt: document === undefined ? null : formatInstant(document.updatedAt),
  };
}

/**
 * The recipes the caller's project can name (decisions §2), by name: its own, `_tenant`'s it does
 * not replace, and the built-in ones neither replaces; a document that does not load is listed in
 * `invalid` with why (and hides no recipe of a lower level, as a run would not fall back to it).
 */
export async function listRecipes(rt: Pick<Runtime, 'repos'>, caller: Caller): Promise<RecipeList> {
  const found = await documentsOf(rt, caller);
  const recipes: RecipeSummary[] = [];
  const invalid: { path: string; message: string }[] = [];
  for (const entry of found.values()) {
    if (entry.recipe !== undefined) recipes.push(summaryOf(entry.recipe, entry.document));
    else
      invalid.push({
        path: `${entry.document.project}/${entry.document.path}`,
        message: entry.invalid ?? '',
      });
  }
  for (const recipe of BUILTIN_RECIPES.values())
    if (!found.has(recipe.name)) recipes.push(summaryOf(recipe, undefined));
  recipes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  invalid.sort((a, b) => (a.path < b.path ? -1 : 1));
  return { recipes, invalid };
}

/**
 * The recipe `name` as the caller's project resolves it (decisions §2), with its YAML: a built-in
 * one as the document that would define it. A document that does not load is returned too, with
 * why, so that it can be repaired.
 *
 * @throws UrsaError `NAME_INVALID`; `NOT_FOUND` when no level has it.
 */
export async function getRecipe(
  rt: Pick<Runtime, 'repos'>,
  caller: Caller,
  name: string,
): Promise<RecipeDetail> {
  const path = recipePath(name);
  const { tenant, project } = caller;
  const own = await rt.repos.documents.get({ tenant, project, path });
  const shared =
    own === undefined && project !== TENANT_PROJECT
      ? await rt.repos.documents.get({ tenant, project: TENANT_PROJECT, path })
      : undefined;
  const document = own ?? shared;
  if (document !== undefined) {
    const { recipe, invalid, source } = load(
      document,
      own !== undefined && project !== TENANT_PROJECT ? 'project' : 'tenant',
    );
    return {
      name,
      description: recipe?.description ?? null,
      engine: recipe?.engine ?? null,
      source,
      path: document.path,
      version: document.version,
      updatedAt: formatInstant(document.updatedAt),
      yaml: document.body,
      createdBy: document.createdBy,
      invalid: invalid ?? null,
    };
  }
  const builtin = BUILTIN_RECIPES.get(name);
  if (builtin === undefined) {
    throw new UrsaError(
      'NOT_FOUND',
      `no recipe ${JSON.stringify(name)} in ${tenant}/${project}, _tenant or built in`,
      {
        field: 'name',
        value: name,
      },
    );
  }
  const yaml = stringify({ description: builtin.description, engine: builtin.engine });
  return { ...summaryOf(builtin, undefined), yaml, createdBy: null, invalid: null };
}

/**
 * Creates or replaces the recipe `name` of the caller's project (decisions §2), validated as a
 * document loaded into the store is (`ursa apply`), with the operator's secret bindings
 * (`secretHosts`) and public URL (an `agent` recipe needs one, issue #25): a refused document
 * changes nothing. One transaction with `guard`'s
 * compare-and-swap and the audit row (issue #19). Schedulers that name it run it from their next
 * run on (their cached check follows the document's version).
 *
 * @throws UrsaError `NAME_INVALID`, `RECIPE_INVALID` (every issue with its field path),
 *   `VERSION_MISMATCH` when `guard` expected another version.
 */
export function setRecipe(
  rt: Runtime,
  caller: Caller,
  name: string,
  yaml: string,
  guard: VersionGuard = {},
): Promise<{ path: string; created: boolean; version: number }> {
  const path = recipePath(name);
  const { secretHosts } = rt.settings;
  parseRecipeDocument(yaml, {
    name,
    path: `${caller.project}/${path}`,
    source: caller.project === TENANT_PROJECT ? 'tenant' : 'project',
    ...(secretHosts ? { secretHosts } : {}),
    publicUrl: rt.settings.publicUrl || null,
  });
  return putNamedDocument(rt, caller, path, yaml, guard);
}

/**
 * Deletes the recipe `name` of the caller's project: its document goes to the trash
 * (restorable), recorded in the audit trail as the caller's delete (issue #19). The name then
 * resolves to the next level (`_tenant`, built in), if one has it; a scheduler left without it
 * fails to load from the next refresh on, with the reason.
 *
 * @throws UrsaError `NAME_INVALID`; `NOT_FOUND` when the project has no such recipe document;
 *   `VERSION_MISMATCH` when `guard` expected another version.
 */
export function deleteRecipe(
  rt: Runtime,
  caller: Caller,
  name: string,
  guard: VersionGuard = {},
): Promise<{ trashPath: string }> {
  return trashNamedDocument(rt, caller, 'recipe', name, recipePath(name), guard);
}
