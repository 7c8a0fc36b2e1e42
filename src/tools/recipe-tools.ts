import { z } from 'zod';
import { recipeDetailSchema, recipeListSchema, recipeSummarySchema } from '../contract/index.js';
import { defineTool } from './define.js';

/** The read-only recipe tools (issue #23): which recipes a scheduler may name, and one's YAML. */

/** A recipe as an agent sees it: what it is called, what it does, what runs it, where it comes from. */
const recipeSummary = recipeSummarySchema.pick({ name: true, description: true, engine: true, source: true });

export const recipeList = defineTool({
  name: 'recipe_list',
  toolset: 'default',
  label: 'read-only',
  description:
    'List the recipes a scheduler of the current project can name in its recipe field: name, description, engine (shell runs a command, http posts to a URL, noop does nothing) and source (the project\'s own, the tenant-wide "tenant" one, or "builtin"). Recipe documents that do not load are listed in invalid with why. Use recipe_get for a recipe\'s YAML.',
  input: z.object({}),
  output: z.object({ recipes: z.array(recipeSummary), invalid: recipeListSchema.shape.invalid }),
  handler: async (scope) => {
    const { recipes, invalid } = await scope.recipes();
    return {
      recipes: recipes.map(({ name, description, engine, source }) => ({
        name,
        description,
        engine,
        source,
      })),
      invalid,
    };
  },
});

export const recipeGet = defineTool({
  name: 'recipe_get',
  toolset: 'default',
  label: 'read-only',
  description:
    'Return one recipe the current project can name, with its complete YAML document (its default params, the command or URL it runs). A recipe document that does not load is returned too: description and engine are null and invalid says why. An unknown name answers "not found".',
  input: z.object({
    name: z.string().describe('The recipe name, as recipe_list shows it.'),
  }),
  output: recipeDetailSchema.pick({
    name: true,
    description: true,
    engine: true,
    source: true,
    yaml: true,
    invalid: true,
  }),
  handler: async (scope, input) => {
    const { name, description, engine, source, yaml, invalid } = await scope.recipe(input.name);
    return { name, description, engine, source, yaml, invalid };
  },
});
