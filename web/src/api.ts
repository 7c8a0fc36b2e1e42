import type { SchedulerDetail, SchedulerList, SchedulerSummary } from '../../src/client/types.js';

/**
 * The REST API of `ursa serve` (src/http/routes/schedulers.ts and resources.ts) as the page uses
 * it: every call carries the bearer token; every error arrives as application/problem+json and
 * becomes an {@link ApiError} with its code, detail and field paths.
 */

export interface Issue {
  readonly path: string;
  readonly message: string;
}

// The REST shapes the CLI's client port already names (one definition for both clients).
export type { SchedulerDetail, SchedulerList, SchedulerSummary };

export interface SaveResult {
  readonly path: string;
  readonly created: boolean;
  readonly version: number;
  readonly warnings: readonly string[];
  readonly filledTimezone: string | null;
}

export interface RefreshResult {
  readonly active: boolean;
  readonly registered: readonly string[];
  readonly invalid: readonly Issue[];
}

export interface Fired {
  readonly correlationId: string;
  readonly logPath: string;
}

/** A run from the feed (GET …/scheduler/:name/runs). */
export interface RunSummary {
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

/** A run from the runs table with its run log (GET …/runs/:correlationId). */
export interface RunDetail {
  readonly correlationId: string;
  readonly tenant: string;
  readonly project: string;
  readonly scheduler: string;
  readonly trigger: string;
  readonly scheduledFor: string;
  readonly coalesced: boolean;
  readonly coalescedUntil: string | null;
  readonly claimedAt: string;
  readonly state: string;
  readonly outcome: string;
  readonly reason: string | null;
  readonly runAs: string;
  readonly sessionId: string | null;
  readonly processId: string | null;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly workerId: string | null;
  readonly attempt: number;
  readonly fencingToken: number | null;
  readonly logPath: string;
  readonly log: string | null;
}

export interface ProcessDetail {
  readonly id: string;
  readonly sessionId: string;
  readonly recipe: string;
  readonly engine: string;
  readonly status: string;
  readonly ownerUser: string;
  readonly triggerOrigin: {
    readonly source: string;
    readonly scheduledFor: string;
    readonly correlationId: string;
    readonly trigger: string;
  };
  readonly params: Readonly<Record<string, unknown>>;
  readonly initialMessage: string | null;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly exitCode: number | null;
  readonly reason: string | null;
  readonly outputTail: string | null;
  readonly errorTail: string | null;
}

export interface InboxItem {
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

export interface DocumentSummary {
  readonly path: string;
  readonly version: number;
}

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

  async #call<T>(method: string, path: string, body?: { type: string; text: string }): Promise<T> {
    const headers: Record<string, string> = {
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
      const problem = (parsed ?? {}) as { code?: string; detail?: string; errors?: Issue[] };
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

  listSchedulers(scope: Scope): Promise<SchedulerList> {
    return this.#call('GET', `${this.#project(scope)}/scheduler`);
  }

  getScheduler(scope: Scope, name: string): Promise<SchedulerDetail> {
    return this.#call('GET', `${this.#project(scope)}/scheduler/${seg(name)}`);
  }

  putScheduler(scope: Scope, name: string, yaml: string): Promise<SaveResult> {
    return this.#call('PUT', `${this.#project(scope)}/scheduler/${seg(name)}`, {
      type: 'application/yaml',
      text: yaml,
    });
  }

  deleteScheduler(scope: Scope, name: string): Promise<{ trashPath: string }> {
    return this.#call('DELETE', `${this.#project(scope)}/scheduler/${seg(name)}`);
  }

  refresh(scope: Scope): Promise<RefreshResult> {
    return this.#call('POST', `${this.#project(scope)}/scheduler/refresh`);
  }

  fire(scope: Scope, name: string): Promise<Fired> {
    return this.#call('POST', `${this.#project(scope)}/scheduler/${seg(name)}/fire`);
  }

  runs(scope: Scope, name: string, limit = 20): Promise<{ runs: RunSummary[]; nextCursor: number | null }> {
    return this.#call('GET', `${this.#project(scope)}/scheduler/${seg(name)}/runs?limit=${limit}`);
  }

  run(scope: Scope, correlationId: string): Promise<RunDetail> {
    return this.#call('GET', `${this.#project(scope)}/runs/${seg(correlationId)}`);
  }

  process(scope: Scope, id: string): Promise<ProcessDetail> {
    return this.#call('GET', `${this.#project(scope)}/processes/${seg(id)}`);
  }

  documents(
    scope: Scope,
    prefix: string,
  ): Promise<{ documents: DocumentSummary[]; nextCursor: string | null }> {
    return this.#call('GET', `${this.#project(scope)}/documents?prefix=${seg(prefix)}&limit=1000`);
  }

  document(scope: Scope, path: string): Promise<DocumentSummary & { body: string }> {
    return this.#call('GET', `${this.#project(scope)}/documents/${docPath(path)}`);
  }

  inbox(tenant: string, all: boolean): Promise<{ items: InboxItem[]; nextCursor: number | null }> {
    return this.#call('GET', `/brain/${seg(tenant)}/inbox?limit=100&all=${all ? 'true' : 'false'}`);
  }

  markRead(tenant: string, ids: readonly number[]): Promise<{ marked: number }> {
    return this.#call('POST', `/brain/${seg(tenant)}/inbox/read`, {
      type: 'application/json',
      text: JSON.stringify({ ids }),
    });
  }
}
