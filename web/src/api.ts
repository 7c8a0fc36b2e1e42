import type {
  AnswerBody,
  AnswerView,
  BackfillBody,
  BackfillView,
  DeleteView,
  DocumentPage,
  DocumentView,
  FiredOneShot,
  FireView,
  HistoryPage,
  InboxItemPage,
  InboxItemView,
  MarkReadBody,
  MarkReadView,
  MeView,
  PauseBody,
  PauseResult,
  Problem,
  ProcessView,
  ProjectRefreshView,
  RestoreVersionBody,
  RunDetail,
  RunPage,
  RunView,
  SchedulerDetail,
  SchedulerList,
  SchedulerSummary,
  SchedulerVersionView,
  SetView,
  StopBody,
  TrashRestoreBody,
  TrashRestoreView,
} from '../../src/contract/index.js';

/**
 * The REST API of `ursa serve` (src/http/routes) as the page uses it: every call carries the
 * bearer token; every error arrives as application/problem+json and becomes an {@link ApiError}
 * with its code, detail and field paths. The shapes are the REST contract's (src/contract,
 * inferred from its zod schemas), imported as types only, so no zod and no node code reach the
 * bundle (issue #21 item 4).
 */

/** One problem of a refused request: a field path and what is wrong with it. */
export type Issue = NonNullable<Problem['errors']>[number];

export type { FiredOneShot, InboxItemView, RunDetail, SchedulerDetail, SchedulerList, SchedulerSummary };

/** A run from the feed (GET …/scheduler/:name/runs). */
export type RunSummary = RunView;

/** What a refresh of the project did (POST …/scheduler/refresh). */
export type RefreshResult = ProjectRefreshView;

/** A problem document (RFC 9457) from the server, or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly issues: readonly Issue[];

  constructor(status: number, code: string, message: string, issues: readonly Issue[] = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.issues = issues;
  }
}

const seg = encodeURIComponent;

/** A path of a document, its segments encoded but its slashes kept. */
function docPath(path: string): string {
  return path.split('/').map(seg).join('/');
}

export interface Scope {
  readonly tenant: string;
  readonly project: string;
}

/** The API as one token sees it. */
export class Api {
  readonly #token: string;
  readonly #onUnauthorized: (error: ApiError) => void;

  /** `onUnauthorized` hears of every 401 (the token was revoked or mistyped) before the caller does. */
  constructor(token: string, onUnauthorized: (error: ApiError) => void = () => {}) {
    this.#token = token;
    this.#onUnauthorized = onUnauthorized;
  }

  async #call<T>(
    method: string,
    path: string,
    body?: { type: string; text: string },
    extra: Record<string, string> = {},
  ): Promise<T> {
    const headers: Record<string, string> = {
      ...extra,
      authorization: `Bearer ${this.#token}`,
      accept: 'application/json, application/problem+json',
    };
    if (body !== undefined) headers['content-type'] = body.type;
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        ...(body === undefined ? {} : { body: body.text }),
      });
    } catch (error) {
      throw new ApiError(
        0,
        'UNREACHABLE',
        `the Ursa server does not answer (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      const problem = (parsed ?? {}) as Partial<Problem>;
      const error = new ApiError(
        response.status,
        problem.code ?? `HTTP_${response.status}`,
        problem.detail ?? `${method} ${path}: HTTP ${response.status}`,
        problem.errors ?? [],
      );
      if (response.status === 401) this.#onUnauthorized(error);
      throw error;
    }
    return parsed as T;
  }

  #project(scope: Scope): string {
    return `/brain/${seg(scope.tenant)}/project/${seg(scope.project)}`;
  }

  /** Who the token acts as in the project, and the user's display zone. */
  me(scope: Scope): Promise<MeView> {
    return this.#call('GET', `${this.#project(scope)}/me`);
  }

  /** The project's schedulers, and the one-shots that fired and left the list. */
  listSchedulers(scope: Scope): Promise<SchedulerList> {
    return this.#call('GET', `${this.#project(scope)}/scheduler?all=true`);
  }

  getScheduler(scope: Scope, name: string): Promise<SchedulerDetail> {
    return this.#call('GET', `${this.#project(scope)}/scheduler/${seg(name)}`);
  }

  putScheduler(scope: Scope, name: string, yaml: string): Promise<SetView> {
    return this.#call('PUT', `${this.#project(scope)}/scheduler/${seg(name)}`, {
      type: 'application/yaml',
      text: yaml,
    });
  }

  deleteScheduler(scope: Scope, name: string): Promise<DeleteView> {
    return this.#call('DELETE', `${this.#project(scope)}/scheduler/${seg(name)}`);
  }

  refresh(scope: Scope): Promise<RefreshResult> {
    return this.#call('POST', `${this.#project(scope)}/scheduler/refresh`);
  }

  fire(scope: Scope, name: string): Promise<FireView> {
    return this.#call('POST', `${this.#project(scope)}/scheduler/${seg(name)}/fire`);
  }

  /** Queues the past occurrences of a range that have no run yet (ISO-8601 instants). */
  backfill(scope: Scope, name: string, from: string, to: string): Promise<BackfillView> {
    const body: BackfillBody = { from, to };
    return this.#call('POST', `${this.#project(scope)}/scheduler/${seg(name)}/backfill`, {
      type: 'application/json',
      text: JSON.stringify(body),
    });
  }

  /** Pauses a scheduler with a note people see beside it; resumes it. */
  pause(scope: Scope, name: string, note: string): Promise<PauseResult> {
    const body: PauseBody = { note };
    return this.#call('POST', `${this.#project(scope)}/scheduler/${seg(name)}/pause`, {
      type: 'application/json',
      text: JSON.stringify(body),
    });
  }

  resume(scope: Scope, name: string): Promise<PauseResult> {
    return this.#call('POST', `${this.#project(scope)}/scheduler/${seg(name)}/resume`);
  }

  runs(scope: Scope, name: string, limit = 20): Promise<RunPage> {
    return this.#call('GET', `${this.#project(scope)}/scheduler/${seg(name)}/runs?limit=${limit}`);
  }

  run(scope: Scope, correlationId: string): Promise<RunDetail> {
    return this.#call('GET', `${this.#project(scope)}/runs/${seg(correlationId)}`);
  }

  process(scope: Scope, id: string): Promise<ProcessView> {
    return this.#call('GET', `${this.#project(scope)}/processes/${seg(id)}`);
  }

  /** Stops a process on whichever worker runs it; its run ends cancelled with `reason`. */
  stopProcess(scope: Scope, id: string, reason: string): Promise<{ stopping: boolean }> {
    const body: StopBody = { reason };
    return this.#call('POST', `${this.#project(scope)}/processes/${seg(id)}/stop`, {
      type: 'application/json',
      text: JSON.stringify(body),
    });
  }

  documents(scope: Scope, prefix: string): Promise<DocumentPage> {
    return this.#call('GET', `${this.#project(scope)}/documents?prefix=${seg(prefix)}&limit=1000`);
  }

  document(scope: Scope, path: string): Promise<DocumentView> {
    return this.#call('GET', `${this.#project(scope)}/documents/${docPath(path)}`);
  }

  /** Who wrote each version of a document, deleted and restored it, newest first (a page). */
  history(scope: Scope, path: string, before?: number): Promise<HistoryPage> {
    const cursor = before === undefined ? '' : `&before=${before}`;
    return this.#call('GET', `${this.#project(scope)}/documents/${docPath(path)}/history?limit=50${cursor}`);
  }

  /** One version of a scheduler's document, live or kept in the archive. */
  schedulerVersion(scope: Scope, name: string, version: number): Promise<SchedulerVersionView> {
    return this.#call('GET', `${this.#project(scope)}/scheduler/${seg(name)}/versions/${version}`);
  }

  /** Writes `version` back as the newest, only while the document is at `current` (else 412). */
  restoreVersion(scope: Scope, name: string, version: number, current: number): Promise<SetView> {
    const body: RestoreVersionBody = { version };
    return this.#call(
      'POST',
      `${this.#project(scope)}/scheduler/${seg(name)}/restore`,
      { type: 'application/json', text: JSON.stringify(body) },
      { 'if-match': `"${current}"` },
    );
  }

  /** Puts a trashed document (its `_vance/trash/…` path) back where it was. */
  restoreTrashed(scope: Scope, path: string): Promise<TrashRestoreView> {
    const body: TrashRestoreBody = { path };
    return this.#call('POST', `${this.#project(scope)}/documents/restore`, {
      type: 'application/json',
      text: JSON.stringify(body),
    });
  }

  inbox(tenant: string, all: boolean): Promise<InboxItemPage> {
    return this.#call('GET', `/brain/${seg(tenant)}/inbox?limit=100&all=${all ? 'true' : 'false'}`);
  }

  markRead(tenant: string, ids: readonly number[]): Promise<MarkReadView> {
    const body: MarkReadBody = { ids: [...ids] };
    return this.#call('POST', `/brain/${seg(tenant)}/inbox/read`, {
      type: 'application/json',
      text: JSON.stringify(body),
    });
  }

  /**
   * Answers question item `id` of the token's user's inbox: recorded now (and the item marked
   * read), delivered to the agent service that asked at a worker's next pass.
   */
  answer(tenant: string, id: number, answer: string): Promise<AnswerView> {
    const body: AnswerBody = { answer };
    return this.#call('POST', `/brain/${seg(tenant)}/inbox/${id}/answer`, {
      type: 'application/json',
      text: JSON.stringify(body),
    });
  }
}
