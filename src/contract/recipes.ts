import { z } from 'zod';
import { instant, invalidDocumentSchema } from './common.js';
import { workflowSetResultSchema } from './workflows.js';

/**
 * Recipes on the wire (decisions §2): the recipes a project can name after the cascade (its own,
 * `_tenant`'s, built in), one with its YAML, and what a write did. Instants are ISO-8601 UTC.
 */

/** The cascade level a recipe comes from. */
export const recipeSourceSchema = z.enum(['project', 'tenant', 'builtin']);

/** A recipe a project can name: where it comes from and what it runs. */
export const recipeSummarySchema = z.object({
  name: z.string(),
  description: z.string(),
  engine: z.string().describe('shell, http, noop, or an engine an application registered'),
  source: recipeSourceSchema,
  path: z.string().nullable().describe('Its document path; null for a built-in recipe'),
  version: z.number().nullable().describe('Its document version; null for a built-in recipe'),
  updatedAt: instant.nullable(),
});

/** `GET …/recipes`: the recipes by name, and the documents that do not load, with why. */
export const recipeListSchema = z.object({
  recipes: z.array(recipeSummarySchema),
  invalid: z.array(invalidDocumentSchema),
});

/**
 * `GET …/recipes/:name`: one recipe with its YAML. A document that does not load is shown too (to
 * repair it): its description and engine are null and `invalid` says why.
 */
export const recipeDetailSchema = recipeSummarySchema.extend({
  description: z.string().nullable(),
  engine: z.string().nullable(),
  yaml: z.string(),
  createdBy: z.string().nullable().describe('Who created its document; null for a built-in recipe'),
  invalid: z.string().nullable().describe('Why its document does not load; null when it does'),
});

/** What a recipe write did (`PUT …/recipes/:name`): as a workflow write's. */
export const recipeSetResultSchema = workflowSetResultSchema;
