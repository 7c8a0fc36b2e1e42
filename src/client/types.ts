/**
 * The client port of the CLI (issue #7 item 7): what a command may ask of Ursa, answered either by
 * a local store ({@link LocalClient}) or by a server over REST ({@link HttpClient}), with the same
 * values either way. The views are the REST API's shapes: instants as ISO-8601 UTC text
 * (`formatInstant`), absent values as `null`. Errors are {@link UrsaError}s with the code, message
 * and field the service raised, wherever it ran.
 */

import type { ActorInterface, DocumentAction } from '../store/audit.js';

/** Where a client works: one project of one tenant (`refresh --all-projects` and the inbox use the tenant only). */
export interface ClientScope {
  readonly tenant: string;
  readonly project: string;
}

/** A scheduler of a project after the cascade, as `GET …/scheduler` lists it. */
export interface SchedulerSummary {
  readonly name: string;
  readonly description: string;
  readonly cron: string | null;
  readonly at: string | null;
  readonly timezone: string;
  readonly enabled: boolean;
  readonly overlap: string;
  readonly lockMode: string;
  readonly tags: readonly string[];
  readonly source: 'project' | 'tenant';
  readonly nextRunAt: string | null;
  readonly lastRun: { readonly at: string; readonly outcome: string; readonly correlationId: string } | null;
}

/** A document that could not be loaded: its path and every reason, in one message. */
export interface InvalidDocument {
  readonly path: string;
  readonly message: string;
}

export interface SchedulerList {
  readonly schedulers: readonly SchedulerSummary[];
  readonly invalid: readonly InvalidDocument[];
}

/** One scheduler document, as `GET …/scheduler/:name` returns it. */
export interface SchedulerDetail {
  readonly name: string;
  readonly path: string;
  readonly source: 'project' | 'tenant';
  readonly version: number;
  readonly yaml: string;
  readonly createdBy: string;
  readonly updatedAt: string;
  readonly nextRunAt: string | null;
}

/** What a scheduler write did (`PUT …/scheduler/:name`). */
export interface SetView {
  readonly path: string;
  readonly created: boolean;
  readonly version: number;
  readonly warnings: readonly string[];
  /** The zone written into a document that had none (spec §10c); null when it named one. */
  readonly filledTimezone: string | null;
}

/** A manual fire (spec §9 `scheduler_fire`). */
export interface FireView {
  readonly correlationId: string;
  readonly logPath: string;
}

/** One run from the activity feed (spec §7). */
export interface RunView {
  readonly correlationId: string;
  readonly scheduler: string;
  readonly trigger: string;
  readonly scheduledFor: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly outcome: string;
  readonly durationMs: number | null;
  readonly coalesced: boolean;
  readonly coalescedUntil: string | null;
  readonly reason: string | null;
  readonly processId: string | null;
  readonly sessionId: string | null;
  readonly logPath: string | null;
}

/** One feed line of a scheduler (spec §7). */
export interface EventView {
  readonly id: number;
  readonly at: string;
  readonly kind: 'START' | 'END' | 'SKIPPED';
  readonly refType: 'SCHEDULER';
  readonly refId: string;
  readonly traceId: string;
  readonly outcome: string;
  readonly logPath: string | null;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** A page request: at most `limit` entries, below the cursor `before` when given. */
export interface PageRequest {
  readonly limit: number;
  readonly before?: number | undefined;
}

export interface RunPage {
  readonly runs: readonly RunView[];
  readonly nextCursor: number | null;
}

export interface EventPage {
  readonly events: readonly EventView[];
  readonly nextCursor: number | null;
}

/** What a refresh of one project did (spec §8). */
export interface RefreshView {
  readonly tenant: string;
  readonly project: string;
  /** False when the project is not active (spec §3): it was unloaded. */
  readonly active: boolean;
  readonly registered: readonly string[];
  readonly invalid: readonly InvalidDocument[];
}

/** A document as listed (without its body). */
export interface DocumentSummary {
  readonly path: string;
  readonly version: number;
  readonly createdBy: string;
  readonly updatedAt: string;
  readonly expiresAt: string | null;
}

/** A document with its body. */
export interface DocumentView extends DocumentSummary {
  readonly body: string;
}

/** One entry of a document's history (issue #19): a version written, a delete or a restore, and by whom. */
export interface HistoryEntryView {
  /** Increasing; the cursor of the next page. */
  readonly id: number;
  readonly version: number;
  readonly at: string;
  readonly action: DocumentAction;
  /** Where the document was (a delete: the path it was deleted from). */
  readonly path: string;
  /** A delete or restore: the document's path in `_vance/trash/`. */
  readonly trashPath: string | null;
  readonly user: string;
  /** The id of the bearer token used; null for a local command, a library call or Ursa itself. */
  readonly tokenId: string | null;
  readonly interface: ActorInterface;
  /** True for an agent's tool call. */
  readonly agent: boolean;
}

/** A page of a document's history, newest first. */
export interface HistoryPage {
  readonly path: string;
  readonly history: readonly HistoryEntryView[];
  readonly nextCursor: number | null;
}

/** An inbox item (decisions §2). */
export interface InboxItemView {
  readonly id: number;
  readonly user: string;
  readonly kind: string;
  readonly title: string;
  readonly body: string;
  readonly project: string | null;
  readonly scheduler: string | null;
  readonly correlationId: string | null;
  readonly logPath: string | null;
  readonly createdAt: string;
  readonly readAt: string | null;
}

export interface InboxRequest extends PageRequest {
  /** Whose inbox; absent: the caller's (the token's user remotely, `admin` locally). */
  readonly user?: string | undefined;
  /** Include items already read. */
  readonly all: boolean;
}

export interface InboxPage {
  /** Whose items these are; null when the server chose (the token's user) and did not say. */
  readonly user: string | null;
  readonly items: readonly InboxItemView[];
  readonly nextCursor: number | null;
}

/**
 * Everything the CLI reads or changes of scheduling data, on one tenant and project
 * ({@link ClientScope}). Every method may throw an {@link UrsaError}; a remote client turns the
 * server's `application/problem+json` back into the same error.
 */
export interface UrsaClient {
  readonly scope: ClientScope;
  /** `local` on a store, `remote` against a server. */
  readonly kind: 'local' | 'remote';
  listSchedulers(): Promise<SchedulerList>;
  /** @throws UrsaError `NOT_FOUND` when neither the project nor `_tenant` has it. */
  getScheduler(name: string): Promise<SchedulerDetail>;
  setScheduler(name: string, yaml: string): Promise<SetView>;
  deleteScheduler(name: string): Promise<{ readonly trashPath: string }>;
  fire(name: string): Promise<FireView>;
  /** Whether a worker runs that will start a fired run; undefined when that cannot be told. */
  workerRunning(): Promise<boolean | undefined>;
  runs(name: string, page: PageRequest): Promise<RunPage>;
  events(name: string, page: PageRequest): Promise<EventPage>;
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
  processStop(processId: string, reason: string): Promise<{ readonly stopping: boolean }>;
  close(): Promise<void>;
}
