/**
 * The client port of the CLI (issue #7 item 7): what a command may ask of Ursa, answered either by
 * a local store ({@link LocalClient}) or by a server over REST ({@link HttpClient}), with the same
 * values either way. The views are the REST API's, inferred from the zod schemas of src/contract
 * (issue #21 item 4): instants as ISO-8601 UTC text (`formatInstant`), absent values as `null`.
 * Only what the CLI asks beyond one REST answer (a scope, a page request, a refresh named by
 * project, whose inbox) is typed here. Errors are {@link UrsaError}s with the code, message and
 * field the service raised, wherever it ran.
 */

import type {
  AnswerView,
  BackfillView,
  DeleteView,
  DocumentSummary,
  DocumentView,
  EventPage,
  FireView,
  HistoryPage,
  InboxItemPage,
  PauseResult,
  ProjectRefreshView,
  RecipeDetail,
  RecipeList,
  RunDetail,
  RunPage,
  SchedulerDescription,
  SchedulerDetail,
  SchedulerList,
  SetView,
  StopView,
  Upcoming,
  WorkflowList,
  WorkflowRunView,
  WorkflowSetView,
  WorkflowStopView,
} from '../contract/index.js';
import type { ProjectFeedRequest } from '../service/feed.js';

export type {
  AnswerView,
  BackfillView,
  Bounds,
  DeleteView,
  DocumentSummary,
  DocumentView,
  EventPage,
  EventView,
  FiredOneShot,
  FireView,
  HistoryEntryView,
  HistoryPage,
  InboxItemView,
  LastRun,
  Pause,
  PauseResult,
  RecipeDetail,
  RecipeList,
  RecipeSummary,
  RunDetail,
  RunPage,
  RunView,
  SchedulerDescription,
  SchedulerDetail,
  SchedulerList,
  SchedulerSummary,
  SetView,
  Upcoming,
  WorkflowList,
  WorkflowRunView,
  WorkflowSetView,
  WorkflowStartBody,
  WorkflowStopView,
} from '../contract/index.js';

/** Where a client works: one project of one tenant (`refresh --all-projects` and the inbox use the tenant only). */
export interface ClientScope {
  readonly tenant: string;
  readonly project: string;
}

/** A page request: at most `limit` entries, below the cursor `before` when given. */
export interface PageRequest {
  readonly limit: number;
  readonly before?: number | undefined;
}

/** A page of a project's feed (`GET …/feed`), as `projectEventPage` takes it. */
export type FeedRequest = ProjectFeedRequest;

/** What a refresh of one project did (spec §8): the REST answer, with the tenant and project it was of. */
export type RefreshView = ProjectRefreshView & { readonly tenant: string; readonly project: string };

export interface InboxRequest extends PageRequest {
  /** Whose inbox; absent: the caller's (the token's user remotely, `admin` locally). */
  readonly user?: string | undefined;
  /** Include items already read. */
  readonly all: boolean;
}

/** A page of the inbox (`GET /brain/:tenant/inbox`) and whose it is: null when the server chose (the token's user) and did not say. */
export type InboxPage = InboxItemPage & { readonly user: string | null };

/**
 * Everything the CLI reads or changes of scheduling data, on one tenant and project
 * ({@link ClientScope}). Every method may throw an {@link UrsaError}; a remote client turns the
 * server's `application/problem+json` back into the same error.
 */
export interface UrsaClient {
  readonly scope: ClientScope;
  /** `local` on a store, `remote` against a server. */
  readonly kind: 'local' | 'remote';
  /** The project's schedulers; with `all`, also its fired one-shots (see `listSchedulers`). */
  listSchedulers(options?: { readonly all?: boolean }): Promise<SchedulerList>;
  /** @throws UrsaError `NOT_FOUND` when neither the project nor `_tenant` has it. */
  getScheduler(name: string): Promise<SchedulerDetail>;
  setScheduler(name: string, yaml: string): Promise<SetView>;
  deleteScheduler(name: string): Promise<DeleteView>;
  fire(name: string): Promise<FireView>;
  /**
   * Queues the past occurrences from `from` to `to` that have no run (see `backfillScheduler`).
   * @throws UrsaError `ARGUMENT_INVALID` (range, one-shot), `SCHEDULER_PAUSED`, `NOT_FOUND`.
   */
  backfill(name: string, from: string, to: string): Promise<BackfillView>;
  /**
   * A scheduler's next fires, with its jitter and within its bounds (see `upcomingOf`).
   * @throws UrsaError `INSTANT_INVALID` for a bad `from`, `NOT_FOUND`.
   */
  upcoming(name: string, request: { count: number; from?: string | undefined }): Promise<Upcoming>;
  /**
   * One scheduler described: its next `count` fires, DST notes, run counts, newest runs, pause and
   * bounds (see `describeScheduler`).
   * @throws UrsaError `NOT_FOUND`.
   */
  describe(name: string, count: number): Promise<SchedulerDescription>;
  /**
   * Pauses a scheduler with a note ('' for none); resumes it. See `pauseScheduler`.
   * @throws UrsaError `SCHEDULER_INHERITED` when it comes from `_tenant`, `NOT_FOUND`.
   */
  pause(name: string, note: string): Promise<PauseResult>;
  resume(name: string): Promise<PauseResult>;
  /** Whether a worker runs that will start a fired run; undefined when that cannot be told. */
  workerRunning(): Promise<boolean | undefined>;
  runs(name: string, page: PageRequest): Promise<RunPage>;
  /**
   * One run of the project with its state, links and run log (see `runDetail`).
   * @throws UrsaError `NOT_FOUND` when the project has no such run.
   */
  run(correlationId: string): Promise<RunDetail>;
  events(name: string, page: PageRequest): Promise<EventPage>;
  /**
   * A page of the project's feed lines of every scheduler, newest first (see `projectEventPage`).
   * @throws UrsaError `INSTANT_INVALID` (since, until), `ARGUMENT_INVALID` (kind, a range backwards).
   */
  feed(request: FeedRequest): Promise<EventPage>;
  /**
   * Re-reads scheduler documents (spec §8): the project (`name`: only that scheduler where the
   * client can, with the same result), or with `allProjects` every project of the tenant.
   */
  refresh(options: {
    readonly name?: string | undefined;
    readonly allProjects?: boolean;
  }): Promise<RefreshView[]>;
  /** @throws UrsaError `NOT_FOUND` when there is no such document. */
  docCat(path: string): Promise<DocumentView>;
  docLs(prefix: string): Promise<DocumentSummary[]>;
  /** Who wrote each version of a document, deleted and restored it, newest first (issue #19). */
  docHistory(path: string, page: PageRequest): Promise<HistoryPage>;
  inbox(request: InboxRequest): Promise<InboxPage>;
  /** Marks items read; returns how many changed, and whose (null: the token's user). */
  inboxRead(
    user: string | undefined,
    ids: readonly number[],
  ): Promise<{ readonly user: string | null; readonly count: number }>;
  /**
   * Answers a question an agent run asked in `user`'s inbox (undefined: the caller's), as the
   * caller; the agent service gets it at a worker's next pass (issue #25).
   *
   * @throws UrsaError `NOT_FOUND`, `NOT_A_QUESTION`, `CONFLICT` (answered already, or its run ended).
   */
  inboxAnswer(user: string | undefined, id: number, answer: string): Promise<AnswerView>;
  processStop(processId: string, reason: string): Promise<StopView>;
  /** The recipes the project can name: its own, `_tenant`'s, built in (see `listRecipes`). */
  listRecipes(): Promise<RecipeList>;
  /** @throws UrsaError `NOT_FOUND` when no level has it. */
  getRecipe(name: string): Promise<RecipeDetail>;
  /** @throws UrsaError `RECIPE_INVALID` (nothing written), `NAME_INVALID`. */
  setRecipe(name: string, yaml: string): Promise<WorkflowSetView>;
  /** @throws UrsaError `NOT_FOUND` when the project has no such recipe document. */
  deleteRecipe(name: string): Promise<DeleteView>;
  /** The project's workflow documents, without bodies. */
  listWorkflows(): Promise<WorkflowList>;
  /** @throws UrsaError `NOT_FOUND` when the project has no such workflow. */
  getWorkflow(name: string): Promise<DocumentView>;
  /** @throws UrsaError `WORKFLOW_INVALID` (nothing written), `NAME_INVALID`. */
  setWorkflow(name: string, yaml: string): Promise<WorkflowSetView>;
  /** @throws UrsaError `NOT_FOUND` when the project has no such workflow. */
  deleteWorkflow(name: string): Promise<DeleteView>;
  /** A workflow run with its steps. @throws UrsaError `NOT_FOUND` for another project's or no run. */
  workflowRun(id: string): Promise<WorkflowRunView>;
  /** Asks the worker running it to stop; `stopping` false when it had ended. */
  stopWorkflowRun(id: string): Promise<WorkflowStopView>;
  close(): Promise<void>;
}
