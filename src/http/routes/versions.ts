import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  problemSchema,
  projectParams,
  restoreVersionBody,
  schedulerParams,
  schedulerVersionParams,
  schedulerVersionSchema,
  setResultSchema,
  trashRestoreBody,
  trashRestoreResultSchema,
} from '../../contract/index.js';
import { actorOf } from '../../service/caller.js';
import { restoreSchedulerVersion, schedulerVersion } from '../../service/document-versions.js';
import { restoreDocument } from '../../service/documents.js';
import { setView } from '../../service/views.js';
import type { AppOptions } from '../app.js';
import { callerFor } from '../auth.js';
import { ifMatch, withEtag } from '../conditional.js';

const PROJECT = '/brain/:tenant/project/:project';

/**
 * Earlier versions and the trash (issue #23): a scheduler's version read from the archive and
 * written back (a scheduler write, audited, conditional with If-Match), and a trashed document
 * put back where it was. A document's history is `GET …/documents/<path>/history`.
 */
export async function versionRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  const errors = { 400: problemSchema, 401: problemSchema, 403: problemSchema, 404: problemSchema };

  r.get(
    `${PROJECT}/scheduler/:name/versions/:version`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          "One version of a scheduler's document: the live one, or one kept when it was replaced or deleted (its history lists them)",
        params: schedulerVersionParams,
        response: { 200: schedulerVersionSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant, project, name, version } = request.params;
      const caller = callerFor(request, tenant, project, 'read');
      const found = await schedulerVersion(rt, caller, name, version);
      return { name, path: found.path, version, yaml: found.body, current: found.current };
    },
  );

  r.post(
    `${PROJECT}/scheduler/:name/restore`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          'Write an earlier version of a scheduler back as its newest (validated and audited like a PUT; a deleted scheduler comes back too); with If-Match: "<version>" only while it is at that version (else 412)',
        params: schedulerParams,
        body: restoreVersionBody,
        response: { 200: setResultSchema, 201: setResultSchema, ...errors, 412: problemSchema },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const result = await restoreSchedulerVersion(rt, caller, name, request.body.version, ifMatch(request));
      return withEtag(reply, result.version)
        .status(result.created ? 201 : 200)
        .send(setView(result));
    },
  );

  r.post(
    `${PROJECT}/documents/restore`,
    {
      schema: {
        tags: ['documents'],
        summary:
          'Put a trashed document (a deleted scheduler, a fired one-shot, …) back where it was; a scheduler is picked up at once',
        params: projectParams,
        body: trashRestoreBody,
        response: { 200: trashRestoreResultSchema, ...errors, 409: problemSchema },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const { path } = request.body;
      return { path: await restoreDocument(rt, tenant, project, path, actorOf(caller)), trashPath: path };
    },
  );
}
