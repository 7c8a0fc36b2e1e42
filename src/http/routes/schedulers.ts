import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { schedulerPath } from '../../scheduler/paths.js';
import { actorOf } from '../../service/caller.js';
import { listSchedulers } from '../../service/listing.js';
import { refreshProjectAs } from '../../service/refresh.js';
import { fireScheduler } from '../../service/runs.js';
import { deleteScheduler, setScheduler } from '../../service/schedulers.js';
import { formatInstant } from '../../time/instant.js';
import type { AppOptions } from '../app.js';
import { callerFor } from '../auth.js';
import { ifMatch, withEtag } from '../conditional.js';
import {
  feedLineSchema,
  hidingNotFound,
  lineView,
  notFound,
  problemSchema,
  projectParams,
  runSchema,
  runView,
  schedulerParams,
} from './schemas.js';

const BASE = '/brain/:tenant/project/:project/scheduler';

const summary = z.object({
  name: z.string(),
  description: z.string(),
  cron: z.string().nullable(),
  at: z.string().nullable(),
  timezone: z.string(),
  enabled: z.boolean(),
  overlap: z.string(),
  lockMode: z.string(),
  tags: z.array(z.string()),
  source: z.enum(['project', 'tenant']),
  nextRunAt: z.string().nullable(),
  lastRun: z.object({ at: z.string(), outcome: z.string(), correlationId: z.string() }).nullable(),
});

const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(20),
  before: z.coerce.number().int().min(1).optional(),
});

/** Scheduler endpoints of spec §10 (list, detail, PUT, DELETE, refresh, fire, events) and a scheduler's runs. */
export async function schedulerRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  const errors = { 400: problemSchema, 401: problemSchema, 403: problemSchema, 404: problemSchema };
  // A conditional write (If-Match) that found another version (issue #19).
  const writeErrors = { ...errors, 412: problemSchema };

  r.get(
    BASE,
    {
      schema: {
        tags: ['schedulers'],
        summary: 'List the schedulers of a project (after the cascade)',
        params: projectParams,
        response: {
          200: z.object({
            schedulers: z.array(summary),
            invalid: z.array(z.object({ path: z.string(), message: z.string() })),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      callerFor(request, tenant, project, 'read');
      const listing = await listSchedulers(rt, tenant, project);
      return {
        schedulers: listing.schedulers.map((l) => ({ ...l, tags: [...l.tags] })),
        invalid: listing.invalid,
      };
    },
  );

  r.get(
    `${BASE}/:name`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          "One scheduler: its YAML document and where it comes from; a project's own carries its version as ETag (for If-Match)",
        params: schedulerParams,
        response: {
          200: z.object({
            name: z.string(),
            path: z.string(),
            source: z.enum(['project', 'tenant']),
            version: z.number(),
            yaml: z.string(),
            createdBy: z.string(),
            updatedAt: z.string(),
            nextRunAt: z.string().nullable(),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      const own = await rt.repos.documents.get({ tenant, project, path: schedulerPath(name) });
      const doc =
        own ?? (await rt.repos.documents.get({ tenant, project: '_tenant', path: schedulerPath(name) }));
      // The same body as another tenant's scheduler (decisions §6): no name, no tenant.
      if (doc === undefined) throw notFound();
      const state = await rt.repos.schedules.get({ tenant, project, name });
      // Only the project's own document: a write to this path never replaces the _tenant one.
      if (own !== undefined) withEtag(reply, own.version);
      return {
        name,
        path: doc.path,
        source: own === undefined ? ('tenant' as const) : ('project' as const),
        version: doc.version,
        yaml: doc.body,
        createdBy: doc.createdBy,
        updatedAt: formatInstant(doc.updatedAt),
        nextRunAt: state?.nextRunAt === null || state === undefined ? null : formatInstant(state.nextRunAt),
      };
    },
  );

  r.put(
    `${BASE}/:name`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          'Create or replace a scheduler (idempotent): YAML text (application/yaml) or {"yaml": "..."}; with If-Match: "<version>" only while the stored document is at that version (else 412)',
        params: schedulerParams,
        // The 64 KiB limit is in bytes of UTF-8, checked with the document (DOCUMENT_INVALID), the
        // same for YAML text and {yaml}.
        body: z.union([z.string(), z.strictObject({ yaml: z.string() })]),
        response: {
          200: z.object({
            path: z.string(),
            created: z.boolean(),
            version: z.number(),
            warnings: z.array(z.string()),
            filledTimezone: z.string().nullable(),
          }),
          201: z.object({
            path: z.string(),
            created: z.boolean(),
            version: z.number(),
            warnings: z.array(z.string()),
            filledTimezone: z.string().nullable(),
          }),
          ...writeErrors,
        },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const yaml = typeof request.body === 'string' ? request.body : request.body.yaml;
      const result = await setScheduler(rt, caller, name, yaml, ifMatch(request));
      return withEtag(reply, result.version)
        .status(result.created ? 201 : 200)
        .send({ ...result, warnings: [...result.warnings], filledTimezone: result.filledTimezone ?? null });
    },
  );

  r.delete(
    `${BASE}/:name`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          'Delete a scheduler (its document goes to the trash); with If-Match: "<version>" only while it is at that version (else 412)',
        params: schedulerParams,
        response: { 200: z.object({ trashPath: z.string() }), ...writeErrors },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const guard = ifMatch(request);
      return hidingNotFound(() => deleteScheduler(rt, caller, name, guard));
    },
  );

  r.post(
    `${BASE}/refresh`,
    {
      schema: {
        tags: ['schedulers'],
        summary: 'Re-read every scheduler document of the project',
        params: projectParams,
        response: {
          200: z.object({
            active: z.boolean(),
            registered: z.array(z.string()),
            invalid: z.array(z.object({ path: z.string(), message: z.string() })),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      const caller = callerFor(request, tenant, project, 'admin');
      const result = await refreshProjectAs(rt, actorOf(caller), tenant, project);
      return {
        active: result.active,
        registered: [...result.registered],
        invalid: result.failures.map((f) => ({ path: f.path, message: f.message })),
      };
    },
  );

  r.post(
    `${BASE}/:name/fire`,
    {
      schema: {
        tags: ['schedulers'],
        summary: 'Fire now, through the overlap policy',
        params: schedulerParams,
        response: { 202: z.object({ correlationId: z.string(), logPath: z.string() }), ...errors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      return reply
        .status(202)
        .send(await hidingNotFound(() => fireScheduler(rt, tenant, project, name, actorOf(caller))));
    },
  );

  r.get(
    `${BASE}/:name/events`,
    {
      schema: {
        tags: ['schedulers'],
        summary: 'Feed lines of a scheduler, newest first; page with ?before=<nextCursor>',
        params: schedulerParams,
        querystring: pageQuery,
        response: {
          200: z.object({ events: z.array(feedLineSchema), nextCursor: z.number().nullable() }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      const { limit, before } = request.query;
      const lines = await rt.repos.feed.listForRef(tenant, project, 'SCHEDULER', name, limit + 1, before);
      const page = lines.slice(0, limit);
      return {
        events: page.map(lineView),
        nextCursor: lines.length > limit ? (page[page.length - 1]?.id ?? null) : null,
      };
    },
  );

  r.get(
    `${BASE}/:name/runs`,
    {
      schema: {
        tags: ['runs'],
        summary: 'Runs of a scheduler from the feed, newest first',
        params: schedulerParams,
        querystring: pageQuery,
        response: {
          200: z.object({ runs: z.array(runSchema), nextCursor: z.number().nullable() }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      const { limit, before } = request.query;
      const page = await rt.repos.feed.listRuns(
        tenant,
        project,
        name,
        before === undefined ? { limit } : { limit, before },
      );
      return { runs: page.runs.map(runView), nextCursor: page.nextCursor };
    },
  );
}
