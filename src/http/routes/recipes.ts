import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  deleteResultSchema,
  projectParams,
  recipeDetailSchema,
  recipeListSchema,
  recipeSetResultSchema,
  schedulerParams,
  yamlBody,
} from '../../contract/index.js';
import { deleteRecipe, getRecipe, listRecipes, setRecipe } from '../../service/recipes.js';
import type { AppOptions } from '../app.js';
import { callerFor } from '../auth.js';
import { ifMatch, withEtag } from '../conditional.js';
import { hidingNotFound } from '../not-found.js';
import { ERROR_RESPONSES, WRITE_ERROR_RESPONSES } from './error-responses.js';

const BASE = '/brain/:tenant/project/:project/recipes';

/**
 * Recipes (decisions §2): the recipes a project can name (its own, `_tenant`'s, built in), one
 * with its YAML, and the project's own documents written and deleted with the validation and
 * audit trail of a local write (issue #19 conditional writes).
 */
export async function recipeRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  const errors = ERROR_RESPONSES;
  const writeErrors = WRITE_ERROR_RESPONSES;

  r.get(
    BASE,
    {
      schema: {
        tags: ['recipes'],
        summary:
          "The recipes a project can name, by name: its own, _tenant's and the built-in ones (source says which); documents that do not load are listed in invalid with why",
        params: projectParams,
        response: { 200: recipeListSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      return listRecipes(rt, callerFor(request, tenant, project, 'read'));
    },
  );

  r.get(
    `${BASE}/:name`,
    {
      schema: {
        tags: ['recipes'],
        summary:
          "One recipe as the project resolves it (its own, else _tenant's, else built in) with its YAML; a project's own carries its version as ETag (for If-Match)",
        params: schedulerParams,
        response: { 200: recipeDetailSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'read');
      const detail = await hidingNotFound(() => getRecipe(rt, caller, name));
      // Only the project's own document: a write to this path never replaces the _tenant one.
      const own = detail.source === (project === '_tenant' ? 'tenant' : 'project');
      if (own && detail.version !== null) withEtag(reply, detail.version);
      return detail;
    },
  );

  r.put(
    `${BASE}/:name`,
    {
      schema: {
        tags: ['recipes'],
        summary:
          'Create or replace a recipe of the project: YAML text (application/yaml) or {"yaml": "..."}, validated first (a refusal changes nothing); with If-Match: "<version>" only while it is at that version (else 412)',
        params: schedulerParams,
        // The 64 KiB limit is in bytes of UTF-8, checked with the document.
        body: yamlBody,
        response: { 200: recipeSetResultSchema, 201: recipeSetResultSchema, ...writeErrors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const yaml = typeof request.body === 'string' ? request.body : request.body.yaml;
      const { path, created, version } = await setRecipe(rt, caller, name, yaml, ifMatch(request));
      return withEtag(reply, version)
        .status(created ? 201 : 200)
        .send({ path, created, version });
    },
  );

  r.delete(
    `${BASE}/:name`,
    {
      schema: {
        tags: ['recipes'],
        summary:
          'Delete a recipe of the project (its document goes to the trash); with If-Match: "<version>" only while it is at that version (else 412)',
        params: schedulerParams,
        response: { 200: deleteResultSchema, ...writeErrors },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const guard = ifMatch(request);
      return hidingNotFound(() => deleteRecipe(rt, caller, name, guard));
    },
  );
}
