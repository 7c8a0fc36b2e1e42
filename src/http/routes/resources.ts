import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  documentOrHistorySchema,
  documentPageSchema,
  documentParams,
  documentsQuery,
  eventPageSchema,
  feedQuery,
  historyQuery,
  inboxPageSchema,
  inboxQuery,
  markReadBody,
  markReadResultSchema,
  meSchema,
  processParams,
  processSchema,
  projectParams,
  runDetailSchema,
  runParams,
  stopBody,
  stopResultSchema,
  tenantParams,
  tenantRefreshSchema,
} from '../../contract/index.js';
import { UrsaError } from '../../errors/index.js';
import { actorOf } from '../../service/caller.js';
import { documentHistoryPage, getDocument, listDocuments } from '../../service/documents.js';
import { projectEventPage } from '../../service/feed.js';
import { inboxPage, markInboxRead } from '../../service/inbox.js';
import { getProcess } from '../../service/processes.js';
import { refreshTenantAs } from '../../service/refresh.js';
import { runDetail } from '../../service/run-views.js';
import { stopProcess } from '../../service/runs.js';
import { whoAmI } from '../../service/users.js';
import { documentSummaryView, documentView, processView, refreshView } from '../../service/views.js';
import type { AppOptions } from '../app.js';
import { callerFor, tenantCallerFor } from '../auth.js';
import { withEtag } from '../conditional.js';
import { hidingNotFound, notFound } from '../not-found.js';
import { ERROR_RESPONSES } from './error-responses.js';

const PROJECT = '/brain/:tenant/project/:project';

/** The suffix of a document path that asks for its history (issue #19). */
const HISTORY_SUFFIX = '/history';

/**
 * The project feed (issue #23), runs by correlationId, documents, processes, the inbox and tenant refresh (issue #7; decisions
 * §7), beside the scheduler endpoints of spec §10. Every route checks its token with `callerFor`
 * first, and answers a resource of another project or tenant exactly like a missing one.
 */
export async function resourceRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  const errors = ERROR_RESPONSES;

  r.get(
    `${PROJECT}/me`,
    {
      schema: {
        tags: ['users'],
        summary:
          "Who the token acts as in the project, and the user's display time zone (where it came from)",
        params: projectParams,
        response: { 200: meSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      return whoAmI(rt, callerFor(request, tenant, project, 'read'));
    },
  );

  r.get(
    `${PROJECT}/feed`,
    {
      schema: {
        tags: ['runs'],
        summary:
          "The project's feed lines of every scheduler, newest first: ?scheduler=, ?kind=START,END,SKIPPED,AGENT, ?correlationId=, ?since= (inclusive) and ?until= (exclusive) ISO-8601 instants narrow it; page with ?before=<nextCursor>",
        params: projectParams,
        querystring: feedQuery,
        response: { 200: eventPageSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      callerFor(request, tenant, project, 'read');
      return projectEventPage(rt, tenant, project, request.query);
    },
  );

  r.get(
    `${PROJECT}/runs/:correlationId`,
    {
      schema: {
        tags: ['runs'],
        summary: 'One run by correlationId, with its run log',
        params: runParams,
        response: { 200: runDetailSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant, project, correlationId } = request.params;
      callerFor(request, tenant, project, 'read');
      const detail = await runDetail(rt, tenant, project, correlationId);
      if (detail === undefined) throw notFound();
      return detail;
    },
  );

  r.get(
    `${PROJECT}/documents`,
    {
      schema: {
        tags: ['documents'],
        summary: 'Documents of a project whose path starts with a prefix, by path (without bodies)',
        params: projectParams,
        querystring: documentsQuery,
        response: {
          200: documentPageSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      callerFor(request, tenant, project, 'read');
      const { prefix, limit, after } = request.query;
      const all = await listDocuments(rt, tenant, project, prefix);
      const rest = after === undefined ? all : all.filter((d) => d.path > after);
      const page = rest.slice(0, limit);
      return {
        documents: page.map(documentSummaryView),
        nextCursor: rest.length > limit ? (page[page.length - 1]?.path ?? null) : null,
      };
    },
  );

  r.get(
    `${PROJECT}/documents/*`,
    {
      schema: {
        tags: ['documents'],
        summary:
          'One document by path, e.g. a run log _vance/logs/scheduler/<name>/….md (its version is the ETag); <path>/history: who wrote each version, deleted and restored it, newest first',
        params: documentParams,
        querystring: historyQuery,
        response: { 200: documentOrHistorySchema, ...errors },
      },
    },
    async (request, reply) => {
      const { tenant, project, '*': requested } = request.params;
      callerFor(request, tenant, project, 'read');
      // Every document path ends in a file name (….yaml, ….md), so none ends in /history.
      if (requested.endsWith(HISTORY_SUFFIX) && requested.length > HISTORY_SUFFIX.length) {
        const path = requested.slice(0, -HISTORY_SUFFIX.length);
        return documentHistoryPage(rt, { tenant, project, path }, request.query);
      }
      const doc = await getDocument(rt, { tenant, project, path: requested });
      if (doc === undefined) throw notFound();
      withEtag(reply, doc.version);
      return documentView(doc);
    },
  );

  r.get(
    `${PROJECT}/processes/:id`,
    {
      schema: {
        tags: ['processes'],
        summary: 'One process: status, trigger origin, exit code and output tails',
        params: processParams,
        response: { 200: processSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant, project, id } = request.params;
      callerFor(request, tenant, project, 'read');
      const found = await getProcess(rt, tenant, project, id);
      if (found === undefined) throw notFound();
      return processView(found);
    },
  );

  r.post(
    `${PROJECT}/processes/:id/stop`,
    {
      schema: {
        tags: ['processes'],
        summary: 'Stop a process on whichever worker runs it (its run ends cancelled)',
        params: processParams,
        body: stopBody,
        response: {
          200: stopResultSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, id } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      if ((await getProcess(rt, tenant, project, id)) === undefined) throw notFound();
      const reason = request.body?.reason;
      return hidingNotFound(() => stopProcess(rt, tenant, id, reason, actorOf(caller)));
    },
  );

  r.get(
    '/brain/:tenant/inbox',
    {
      schema: {
        tags: ['inbox'],
        summary: "A user's inbox items, newest first (unread ones unless all=true)",
        params: tenantParams,
        querystring: inboxQuery,
        response: {
          200: inboxPageSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant } = request.params;
      const caller = tenantCallerFor(request, tenant, 'read');
      const { limit, before, all } = request.query;
      const user = whose(caller, request.query.user);
      return inboxPage(rt, tenant, user, { unreadOnly: all !== 'true', limit, before });
    },
  );

  r.post(
    '/brain/:tenant/inbox/read',
    {
      schema: {
        tags: ['inbox'],
        summary: 'Mark inbox items read; ids of other users or already read are left alone',
        params: tenantParams,
        body: markReadBody,
        response: { 200: markReadResultSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant } = request.params;
      const caller = tenantCallerFor(request, tenant, 'write');
      const user = whose(caller, request.body.user);
      return { marked: await markInboxRead(rt, tenant, user, request.body.ids) };
    },
  );

  // Not under /brain/:tenant/project/…: the third segment is the static `scheduler`, which the
  // router tells apart from `project`; there is no project named in a tenant-wide refresh.
  r.post(
    '/brain/:tenant/scheduler/refresh',
    {
      schema: {
        tags: ['schedulers'],
        summary: 'Re-read the scheduler documents of every project of the tenant',
        params: tenantParams,
        response: {
          200: tenantRefreshSchema,
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant } = request.params;
      const caller = tenantCallerFor(request, tenant, 'admin');
      const results = await refreshTenantAs(rt, actorOf(caller), tenant);
      return {
        projects: results
          .map((result) => {
            const view = refreshView(result);
            return { project: result.project, ...view, registered: view.registered.sort() };
          })
          .sort((a, b) => (a.project < b.project ? -1 : a.project > b.project ? 1 : 0)),
      };
    },
  );
}

/**
 * The user whose inbox a request is about: the token's user by default; another one only with the
 * admin role (decisions §6).
 *
 * @throws UrsaError `FORBIDDEN` for another user without admin.
 */
export function whose(caller: { user: string; role: string }, user: string | undefined): string {
  if (user === undefined || user === caller.user) return caller.user;
  if (caller.role !== 'admin') {
    throw new UrsaError(
      'FORBIDDEN',
      `user: reading or marking the inbox of another user (${user}) needs the admin role; this token has ${caller.role}`,
      { field: 'user', value: user },
    );
  }
  return user;
}
