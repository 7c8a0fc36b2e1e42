import { validateName } from '../scheduler/name.js';
import { builtinRecipe } from './builtin.js';
import type { RecipeDefinition } from './recipe.js';

/**
 * Where {@link resolveRecipe} looks, level by level. Each function returns the recipe of that
 * level or undefined; it may throw (e.g. `RECIPE_INVALID` for a broken document), and the
 * resolver lets the error through rather than falling back silently.
 */
export interface RecipeLookup {
  /** The project's own `_vance/recipes/<name>.yaml`. */
  readonly project: (name: string) => RecipeDefinition | undefined;
  /** The tenant-wide `_tenant/_vance/recipes/<name>.yaml`. */
  readonly tenant: (name: string) => RecipeDefinition | undefined;
  /** Built-in recipes; default {@link builtinRecipe}. */
  readonly builtin?: (name: string) => RecipeDefinition | undefined;
}

/**
 * Resolves a recipe name through the cascade project → `_tenant` → built-in (spec §2, decisions
 * §2): the first level that has it wins, whole (no field merge). Pure: all I/O is in `lookup`.
 *
 * @returns the recipe, or undefined when no level has it.
 * @throws UrsaError `NAME_INVALID` when `name` breaks the name rule (decisions §6), before any lookup.
 */
export function resolveRecipe(name: string, lookup: RecipeLookup): RecipeDefinition | undefined {
  validateName(name, 'recipe name');
  return lookup.project(name) ?? lookup.tenant(name) ?? (lookup.builtin ?? builtinRecipe)(name);
}

/**
 * A scheduler's `params` over its recipe's defaults (spec §2 "Override for Recipe defaults"):
 * shallow, per top-level key, the scheduler's value wins. Returns a new object; neither input
 * changes. Keys are copied as data, so a `__proto__` key cannot change the result's prototype.
 */
export function mergeParams(
  recipeDefaults: Readonly<Record<string, unknown>>,
  schedulerParams: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries([...Object.entries(recipeDefaults), ...Object.entries(schedulerParams)]);
}
