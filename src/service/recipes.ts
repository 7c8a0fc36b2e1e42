import { findRecipe as findRecipeIn } from '../catalog/catalog.js';
import type { RecipeDefinition } from '../recipes/recipe.js';
import type { Runtime } from '../runtime/context.js';

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
