import { validateName } from '../scheduler/name.js';

/** Where recipe documents live in a project or in `_tenant` (decisions §2). */
export const RECIPE_PREFIX = '_vance/recipes/';

/**
 * The document path of a recipe: `_vance/recipes/<name>.yaml` (decisions §2).
 *
 * @throws UrsaError `NAME_INVALID` when `name` breaks the name rule (decisions §6).
 */
export function recipePath(name: string): string {
  return `${RECIPE_PREFIX}${validateName(name, 'recipe name')}.yaml`;
}
