import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  backfillBody,
  backfillResultSchema,
  deleteResultSchema,
  describeQuery,
  eventPageSchema,
  fireBody,
  fireResultSchema,
  pageQuery,
  pauseBody,
  pauseResultSchema,
  problemSchema,
  projectParams,
  refreshSchema,
  runPageSchema,
  schedulerDescriptionSchema,
  schedulerDetailSchema,
  schedulerListQuery,
  schedulerListSchema,
  schedulerParams,
  setResultSchema,
  upcomingQuery,
  upcomingSchema,
  yamlBody,
} from '../../contract/index.js';
import { backfillScheduler } from '../../service/backfill.js';
import { actorOf } from '../../service/caller.js';
import { describeScheduler } from '../../service/describe.js';
import { schedulerEventPage } from '../../service/feed.js';
import { getSchedulerDetail, listSchedulers } from '../../service/listing.js';
import { pauseScheduler, resumeScheduler } from '../../service/pauses.js';
import { refreshProjectAs } from '../../service/refresh.js';
import { schedulerRunPage } from '../../service/run-views.js';
import { fireScheduler } from '../../service/runs.js';
import { deleteScheduler, setScheduler } from '../../service/schedulers.js';
import { upcomingOf } from '../../service/upcoming.js';
import { refreshView, setView } from '../../service/views.js';
import type { AppOptions } from '../app.js';
import { callerFor } from '../auth.js';
import { ifMatch, withEtag } from '../conditional.js';
import { hidingNotFound } from '../not-found.js';
import { ERROR_RESPONSES, WRITE_ERROR_RESPONSES } from './error-responses.js';

const BASE = '/brain/:tenant/project/:project/scheduler';

/** Scheduler endpoints of spec §10 (list, detail, PUT, DELETE, refresh, fire, events) and a scheduler's runs. */
export async function schedulerRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  // 410: a fired one-shot asked for by name (issue #23).
  const errors = { ...ERROR_RESPONSES, 410: problemSchema };
  const writeErrors = { ...WRITE_ERROR_RESPONSES, 410: problemSchema };

  r.get(
    BASE,
    {
      schema: {
        tags: ['schedulers'],
        summary: 'List the schedulers of a project (after the cascade); ?all=true adds the fired one-shots',
        params: projectParams,
        querystring: schedulerListQuery,
        response: {
          200: schedulerListSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      callerFor(request, tenant, project, 'read');
      return listSchedulers(rt, tenant, project, { all: request.query.all === 'true' });
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
          200: schedulerDetailSchema,
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      // The same body as another tenant's scheduler (decisions §6): no name, no tenant.
      const detail = await hidingNotFound(() => getSchedulerDetail(rt, tenant, project, name));
      // Only the project's own document: a write to this path never replaces the _tenant one.
      if (detail.source === 'project') withEtag(reply, detail.version);
      return detail;
    },
  );

  r.get(
    `${BASE}/:name/describe`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          'One scheduler described: its list entry (pause, bounds), its jitter, its next fires (?count=1-1000, 5 by default), the DST transitions of the coming year that touch them, what maxRuns leaves, its run counts per outcome and its newest runs',
        params: schedulerParams,
        querystring: describeQuery,
        response: {
          200: schedulerDescriptionSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      return hidingNotFound(() => describeScheduler(rt, tenant, project, name, request.query.count));
    },
  );

  r.get(
    `${BASE}/:name/upcoming`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          "A scheduler's next fires (?count=1-1000, 5 by default; ?from=ISO-8601, now by default): each occurrence and the instant it starts at, later by its jitter, within its bounds",
        params: schedulerParams,
        querystring: upcomingQuery,
        response: {
          200: upcomingSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      return hidingNotFound(() => upcomingOf(rt, tenant, project, name, request.query));
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
        body: yamlBody,
        response: {
          200: setResultSchema,
          201: setResultSchema,
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
        .send(setView(result));
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
        response: { 200: deleteResultSchema, ...writeErrors },
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
          200: refreshSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      const caller = callerFor(request, tenant, project, 'admin');
      return refreshView(await refreshProjectAs(rt, actorOf(caller), tenant, project));
    },
  );

  r.post(
    `${BASE}/:name/fire`,
    {
      schema: {
        tags: ['schedulers'],
        summary: 'Fire now, through the overlap policy',
        description:
          'Runs the scheduler as written: a body with params or any other field is refused (400) with the reason. 202 Accepted: the run is requested, and a worker judges it through the overlap policy (it starts, waits behind the active run, is folded into the waiting one, or is skipped); its Location header is the run (GET …/runs/{correlationId}: its state, links and run log).',
        params: schedulerParams,
        body: fireBody,
        response: { 202: fireResultSchema, ...errors, 409: problemSchema },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const fired = await hidingNotFound(() => fireScheduler(rt, tenant, project, name, actorOf(caller)));
      // Where the caller follows what became of it (issue #23: a fire's answer said nothing of that).
      const run = `/brain/${encodeURIComponent(tenant)}/project/${encodeURIComponent(project)}/runs/${encodeURIComponent(fired.correlationId)}`;
      return reply.status(202).header('location', run).send(fired);
    },
  );

  // A pause of a scheduler from _tenant in a project (409 SCHEDULER_INHERITED); a fire of a
  // paused one (409 SCHEDULER_PAUSED).
  const stateErrors = { ...writeErrors, 409: problemSchema };

  r.post(
    `${BASE}/:name/backfill`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          'Backfill a cron scheduler: every past occurrence from `from` to `to` (inclusive; at most 1,000) that has no run yet is queued, and runs oldest first, one after another, through the lane like any run (bounds, budget); asked twice, each occurrence runs once',
        params: schedulerParams,
        body: backfillBody,
        response: { 202: backfillResultSchema, ...stateErrors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      return reply
        .status(202)
        .send(await hidingNotFound(() => backfillScheduler(rt, caller, name, request.body)));
    },
  );

  r.post(
    `${BASE}/:name/pause`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          'Pause a scheduler with a note: its document gets enabled: false; occurrences in the pause are not run, and a fire is refused with the note; with If-Match: "<version>" only while it is at that version (else 412)',
        params: schedulerParams,
        body: pauseBody,
        response: { 200: pauseResultSchema, ...stateErrors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const guard = ifMatch(request);
      const result = await hidingNotFound(() =>
        pauseScheduler(rt, caller, name, request.body?.note ?? '', guard),
      );
      return withEtag(reply, result.version).send(result);
    },
  );

  r.post(
    `${BASE}/:name/resume`,
    {
      schema: {
        tags: ['schedulers'],
        summary:
          'Resume a paused scheduler: its document gets enabled: true, and it fires from its next occurrence on (what fell in the pause is not run)',
        params: schedulerParams,
        response: { 200: pauseResultSchema, ...stateErrors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const guard = ifMatch(request);
      const result = await hidingNotFound(() => resumeScheduler(rt, caller, name, guard));
      return withEtag(reply, result.version).send(result);
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
          200: eventPageSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      const { limit, before } = request.query;
      return schedulerEventPage(rt, tenant, project, name, { limit, before });
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
          200: runPageSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      callerFor(request, tenant, project, 'read');
      const { limit, before } = request.query;
      return schedulerRunPage(rt, tenant, project, name, { limit, before });
    },
  );
}
