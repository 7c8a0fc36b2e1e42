import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { RefreshResult } from '../runtime/registrar.js';
import { backfillScheduler } from '../service/backfill.js';
import { actorOf, type Caller } from '../service/caller.js';
import { describeScheduler } from '../service/describe.js';
import { documentHistoryPage, getDocument, listDocuments } from '../service/documents.js';
import { projectEventPage, schedulerEventPage } from '../service/feed.js';
import { inboxPage, markInboxRead } from '../service/inbox.js';
import { answerQuestion } from '../service/inbox-answers.js';
import { getSchedulerDetail, listSchedulers } from '../service/listing.js';
import { pauseScheduler, resumeScheduler } from '../service/pauses.js';
import { deleteRecipe, getRecipe, listRecipes, setRecipe } from '../service/recipes.js';
import { refreshProjectAs, refreshTenantAs } from '../service/refresh.js';
import { runDetail, schedulerRunPage } from '../service/run-views.js';
import { fireScheduler, stopProcess } from '../service/runs.js';
import { deleteScheduler, setScheduler } from '../service/schedulers.js';
import { upcomingOf } from '../service/upcoming.js';
import {
  documentSummaryView,
  documentView,
  refreshView as projectRefreshView,
  setView,
  workflowRunView,
} from '../service/views.js';
import { workerRunning } from '../service/workers.js';
import {
  deleteWorkflow,
  getWorkflow,
  getWorkflowRun,
  listWorkflows,
  setWorkflow,
  stopWorkflowRun,
} from '../service/workflows.js';
import type {
  AnswerView,
  BackfillView,
  ClientScope,
  DocumentSummary,
  DocumentView,
  EventPage,
  FeedRequest,
  FireView,
  HistoryPage,
  InboxPage,
  InboxRequest,
  PageRequest,
  PauseResult,
  RecipeDetail,
  RecipeList,
  RefreshView,
  RunDetail,
  RunPage,
  SchedulerDescription,
  SchedulerDetail,
  SchedulerList,
  SetView,
  Upcoming,
  UrsaClient,
  WorkflowList,
  WorkflowRunView,
  WorkflowSetView,
  WorkflowStopView,
} from './types.js';

/** Whose inbox a local client shows when none is named (the CLI's operator user). */
export const LOCAL_DEFAULT_USER = 'admin';

/** A refresh as the client port names it: the REST view with its tenant and project. */
function refreshView(r: RefreshResult): RefreshView {
  return { tenant: r.tenant, project: r.project, ...projectRefreshView(r) };
}

/**
 * The client on an opened store: the service functions the REST routes call, with the
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

  listSchedulers(options: { readonly all?: boolean } = {}): Promise<SchedulerList> {
    return listSchedulers(this.rt, this.scope.tenant, this.scope.project, options);
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

  backfill(name: string, from: string, to: string): Promise<BackfillView> {
    return backfillScheduler(this.rt, this.#caller, name, { from, to });
  }

  upcoming(name: string, request: { count: number; from?: string | undefined }): Promise<Upcoming> {
    return upcomingOf(this.rt, this.scope.tenant, this.scope.project, name, request);
  }

  describe(name: string, count: number): Promise<SchedulerDescription> {
    return describeScheduler(this.rt, this.scope.tenant, this.scope.project, name, count);
  }

  pause(name: string, note: string): Promise<PauseResult> {
    return pauseScheduler(this.rt, this.#caller, name, note);
  }

  resume(name: string): Promise<PauseResult> {
    return resumeScheduler(this.rt, this.#caller, name);
  }

  workerRunning(): Promise<boolean> {
    return workerRunning(this.rt);
  }

  runs(name: string, page: PageRequest): Promise<RunPage> {
    return schedulerRunPage(this.rt, this.scope.tenant, this.scope.project, name, page);
  }

  events(name: string, page: PageRequest): Promise<EventPage> {
    return schedulerEventPage(this.rt, this.scope.tenant, this.scope.project, name, page);
  }

  feed(request: FeedRequest): Promise<EventPage> {
    return projectEventPage(this.rt, this.scope.tenant, this.scope.project, request);
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

  async run(correlationId: string): Promise<RunDetail> {
    const { tenant, project } = this.scope;
    const found = await runDetail(this.rt, tenant, project, correlationId);
    if (found === undefined) {
      throw new UrsaError(
        'NOT_FOUND',
        `run ${JSON.stringify(correlationId)} does not exist in ${tenant}/${project}`,
        {
          field: 'correlationId',
          value: correlationId,
        },
      );
    }
    return found;
  }

  async docCat(path: string): Promise<DocumentView> {
    const { tenant, project } = this.scope;
    const found = await getDocument(this.rt, { tenant, project, path });
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
    return (await listDocuments(this.rt, tenant, project, prefix)).map(documentSummaryView);
  }

  docHistory(path: string, page: PageRequest): Promise<HistoryPage> {
    const { tenant, project } = this.scope;
    return documentHistoryPage(this.rt, { tenant, project, path }, page);
  }

  async inbox(request: InboxRequest): Promise<InboxPage> {
    const user = request.user ?? LOCAL_DEFAULT_USER;
    const page = await inboxPage(this.rt, this.scope.tenant, user, {
      unreadOnly: !request.all,
      limit: request.limit,
      before: request.before,
    });
    return { user, ...page };
  }

  async inboxRead(
    user: string | undefined,
    ids: readonly number[],
  ): Promise<{ user: string; count: number }> {
    const whose = user ?? LOCAL_DEFAULT_USER;
    const count = await markInboxRead(this.rt, this.scope.tenant, whose, ids);
    return { user: whose, count };
  }

  inboxAnswer(user: string | undefined, id: number, answer: string): Promise<AnswerView> {
    const whose = user ?? LOCAL_DEFAULT_USER;
    return answerQuestion(this.rt, this.scope.tenant, whose, id, answer, this.#caller.user);
  }

  processStop(processId: string, reason: string): Promise<{ stopping: boolean }> {
    return stopProcess(this.rt, this.scope.tenant, processId, reason, actorOf(this.#caller));
  }

  listRecipes(): Promise<RecipeList> {
    return listRecipes(this.rt, this.#caller);
  }

  getRecipe(name: string): Promise<RecipeDetail> {
    return getRecipe(this.rt, this.#caller, name);
  }

  setRecipe(name: string, yaml: string): Promise<WorkflowSetView> {
    return setRecipe(this.rt, this.#caller, name, yaml);
  }

  deleteRecipe(name: string): Promise<{ trashPath: string }> {
    return deleteRecipe(this.rt, this.#caller, name);
  }

  async listWorkflows(): Promise<WorkflowList> {
    return { workflows: (await listWorkflows(this.rt, this.#caller)).map(documentSummaryView) };
  }

  async getWorkflow(name: string): Promise<DocumentView> {
    return documentView(await getWorkflow(this.rt, this.#caller, name));
  }

  async setWorkflow(name: string, yaml: string): Promise<WorkflowSetView> {
    const { path, created, version } = await setWorkflow(this.rt, this.#caller, name, yaml);
    return { path, created, version };
  }

  deleteWorkflow(name: string): Promise<{ trashPath: string }> {
    return deleteWorkflow(this.rt, this.#caller, name);
  }

  async workflowRun(id: string): Promise<WorkflowRunView> {
    return workflowRunView(await getWorkflowRun(this.rt, this.#caller, id));
  }

  async stopWorkflowRun(id: string): Promise<WorkflowStopView> {
    return { stopping: await stopWorkflowRun(this.rt, this.#caller, id) };
  }

  async close(): Promise<void> {
    await this.#close?.();
  }
}
