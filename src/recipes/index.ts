/** Recipes (decisions §2): documents `_vance/recipes/<name>.yaml`, built-ins, and the cascade. */
export { BUILTIN_RECIPES, builtinRecipe } from './builtin.js';
export {
  parseRecipeDocument,
  type RecipeDocumentOptions,
  type RecipeValidation,
  recipeFromObject,
  validateRecipeDocument,
  validateRecipeObject,
} from './parse.js';
export { RECIPE_PREFIX, recipePath } from './paths.js';
export type { RecipeDefinition } from './recipe.js';
export { mergeParams, type RecipeLookup, resolveRecipe } from './resolve.js';
export { BUILTIN_ENGINES } from './schema.js';
