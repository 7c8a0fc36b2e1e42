import type { RecipeDefinition } from './recipe.js';

function builtin(name: string, engine: string, description: string): RecipeDefinition {
  return Object.freeze({
    name,
    description,
    engine,
    params: Object.freeze({}),
    command: undefined,
    url: undefined,
    headers: undefined,
    secretHeaders: undefined,
    timeoutMs: undefined,
    source: 'builtin',
  });
}

/**
 * The recipes Ursa ships, the last level of the cascade project → `_tenant` → built-in
 * (decisions §2), by name. Frozen.
 */
export const BUILTIN_RECIPES: ReadonlyMap<string, RecipeDefinition> = new Map(
  [builtin('noop', 'noop', 'Does nothing; for tests and benchmarks.')].map((r) => [r.name, r]),
);

/** The built-in recipe called `name`, or undefined. */
export function builtinRecipe(name: string): RecipeDefinition | undefined {
  return BUILTIN_RECIPES.get(name);
}
