import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { RefreshResult } from '../runtime/registrar.js';
import { actorOf, type Caller } from '../service/caller.js';
import { getSchedulerDetail, listSchedulers } from '../service/listing.js';
import { refreshProjectAs, refreshTenantAs } from '../service/refresh.js';
import { fireScheduler, stopProcess } from '../service/runs.js';
import { deleteScheduler, setScheduler } from '../service/schedulers.js';
import {
  documentSummaryView,
  documentView,
  historyEntryView,
  inboxItemView,
  lineView,
  refreshView as projectRefreshView,
  runView,
  setView,
} from '../service/views.js';
import type {
  ClientScope,
  DocumentSummary,
  DocumentView,
  EventPage,
  FireView,
  HistoryPage,
  InboxPage,
  InboxRequest,
  PageRequest,
  RefreshView,
  RunPage,
  SchedulerDetail,
  SchedulerList,
  SetView,
  UrsaClient,
} from './types.js';

/** Whose inbox a local client shows when none is named (the CLI's operator user). */
export const LOCAL_DEFAULT_USER = 'admin';

/** How recent a worker's lease must be for it to count as running (its heartbeat is every second). */
const LIVE_WORKER_MS = 5_000;

/** A refresh as the client port names it: the REST view with its tenant and project. */
function refreshView(r: RefreshResult): RefreshView {
  return { tenant: r.tenant, project: r.project, ...projectRefreshView(r) };
}

/**
 * The client on an opened store: the services and repositories the REST routes call, with the
 * CLI's operator as the caller (`user`, default `admin`, with the admin role: decisions §6),
 * through the `cli` interface in the audit trail (issue #19).
 */
export class LocalClient implements UrsaClient {
  readonly kind = 'local' as const;
  readonly #caller: Caller;
  readonly #close: (() => Promise<void>) | undefined;

  constructor(
    private readonly rt: Runtime,
    readonly scope: ClientScope,
    options: { user?: string | undefined; close?: () => Promise<void> } = {},
  ) {
    this.#caller = { ...scope, user: options.user ?? LOCAL_DEFAULT_USER, role: 'admin', interface: 'cli' };
    this.#close = options.close;
  }

  listSchedulers(): Promise<SchedulerList> {
    return listSchedulers(this.rt, this.scope.tenant, this.scope.project);
  }

  getScheduler(name: string): Promise<SchedulerDetail> {
    return getSchedulerDetail(this.rt, this.scope.tenant, this.scope.project, name);
  }

  async setScheduler(name: string, yaml: string): Promise<SetView> {
    return setView(await setScheduler(this.rt, this.#caller, name, yaml));
  }

  deleteScheduler(name: string): Promise<{ trashPath: string }> {
    return deleteScheduler(this.rt, this.#caller, name);
  }

  fire(name: string): Promise<FireView> {
    return fireScheduler(this.rt, this.scope.tenant, this.scope.project, name, actorOf(this.#caller));
  }

  async workerRunning(): Promise<boolean> {
    return (await this.rt.repos.workers.live(this.rt.clock.now(), LIVE_WORKER_MS)).length > 0;
  }

  async runs(name: string, page: PageRequest): Promise<RunPage> {
    const { tenant, project } = this.scope;
    const found = await this.rt.repos.feed.listRuns(tenant, project, name, {
      limit: page.limit,
      ...(page.before === undefined ? {} : { before: page.before }),
    });
    return { runs: found.runs.map(runView), nextCursor: found.nextCursor };
  }

  async events(name: string, page: PageRequest): Promise<EventPage> {
    const { tenant, project } = this.scope;
    const lines = await this.rt.repos.feed.listForRef(
      tenant,
      project,
      'SCHEDULER',
      name,
      page.limit + 1,
      page.before,
    );
    const shown = lines.slice(0, page.limit);
    return {
      events: shown.map(lineView),
      nextCursor: lines.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null,
    };
  }

  async refresh(options: { name?: string | undefined; allProjects?: boolean }): Promise<RefreshView[]> {
    const { tenant, project } = this.scope;
    const by = actorOf(this.#caller);
    if (!options.allProjects)
      return [refreshView(await refreshProjectAs(this.rt, by, tenant, project, options.name))];
    // By project name, as the REST API answers.
    return (await refreshTenantAs(this.rt, by, tenant))
      .map(refreshView)
      .sort((a, b) => (a.project < b.project ? -1 : a.project > b.project ? 1 : 0));
  }

  async docCat(path: string): Promise<DocumentView> {
    const { tenant, project } = this.scope;
    const found = await this.rt.repos.documents.get({ tenant, project, path });
    if (found === undefined) {
      throw new UrsaError(
        'NOT_FOUND',
        `document ${JSON.stringify(path)} does not exist in ${tenant}/${project}`,
        { field: 'path', value: path },
      );
    }
    return documentView(found);
  }

  async docLs(prefix: string): Promise<DocumentSummary[]> {
    const { tenant, project } = this.scope;
    return (await this.rt.repos.documents.list(tenant, project, prefix)).map(documentSummaryView);
  }

  async docHistory(path: string, page: PageRequest): Promise<HistoryPage> {
    const { tenant, project } = this.scope;
    const found = await this.rt.repos.audit.documentHistory({ tenant, project, path }, page);
    return { path, history: found.records.map(historyEntryView), nextCursor: found.nextCursor };
  }

  async inbox(request: InboxRequest): Promise<InboxPage> {
    const user = request.user ?? LOCAL_DEFAULT_USER;
    const found = await this.rt.repos.inbox.list(this.scope.tenant, user, {
      unreadOnly: !request.all,
      limit: request.limit + 1,
      ...(request.before === undefined ? {} : { beforeId: request.before }),
    });
    const items = found.slice(0, request.limit);
    const last = items[items.length - 1];
    return {
      user,
      items: items.map(inboxItemView),
      nextCursor: found.length > request.limit && last !== undefined ? last.id : null,
    };
  }

  async inboxRead(
    user: string | undefined,
    ids: readonly number[],
  ): Promise<{ user: string; count: number }> {
    const whose = user ?? LOCAL_DEFAULT_USER;
    const count = await this.rt.repos.inbox.markRead(this.scope.tenant, whose, ids, this.rt.clock.now());
    return { user: whose, count };
  }

  processStop(processId: string, reason: string): Promise<{ stopping: boolean }> {
    return stopProcess(this.rt, this.scope.tenant, processId, reason, actorOf(this.#caller));
  }

  async close(): Promise<void> {
    await this.#close?.();
  }
}
