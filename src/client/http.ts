import type {
  DeleteView,
  DocumentPage,
  InboxItemPage,
  MarkReadBody,
  MarkReadView,
  ProjectRefreshView,
  StopBody,
  StopView,
  TenantRefreshView,
} from '../contract/index.js';
import { InfrastructureError, UrsaError } from '../errors/index.js';
import { validateName } from '../scheduler/name.js';
import { problemToError, reasonOf } from './http-errors.js';
import type * as C from './types.js';

/** The part of the global `fetch` the client uses (tests pass their own). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** Documents per page of `GET …/documents` (the most the API gives). */
const DOCUMENT_PAGE = 1000;

/** How long one request may take before the client gives up, milliseconds. */
const REQUEST_TIMEOUT_MS = 30_000;

/** What {@link HttpClient} needs. */
export interface HttpClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  readonly baseUrl: string;
  /** A bearer token (decisions §6). */
  readonly token: string;
  readonly scope: C.ClientScope;
  /** Defaults to the global `fetch`. */
  readonly fetch?: Fetch | undefined;
  readonly timeoutMs?: number | undefined;
}

type Query = Readonly<Record<string, string | number | boolean | undefined>>;

interface Call {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
}

/** `/a b/` → `a%20b`: each segment encoded, slashes kept (document paths). */
const segments = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/**
 * The client against an Ursa server (issue #7 item 7): the REST API of `src/http/` with a bearer
 * token. Errors come back as the {@link UrsaError}s the server raised ({@link problemToError});
 * a server that cannot be reached is `STORE_UNAVAILABLE`, naming the URL.
 */
export class HttpClient implements C.UrsaClient {
  readonly kind = 'remote' as const;
  readonly scope: C.ClientScope;
  readonly #base: URL;
  readonly #token: string;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;

  constructor(options: HttpClientOptions) {
    this.#base = HttpClient.parseUrl(options.baseUrl);
    this.#token = options.token;
    this.scope = options.scope;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  /**
   * A server base URL as given to `--url`: `http://` or `https://`, no query or fragment.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for anything else.
   */
  static parseUrl(text: string): URL {
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.search ||
      url.hash
    ) {
      throw new UrsaError(
        'ARGUMENT_INVALID',
        `url: ${JSON.stringify(text)} is not the URL of an Ursa server`,
        {
          field: 'url',
          value: text,
          allowed: 'an http:// or https:// URL such as http://127.0.0.1:8080',
        },
      );
    }
    if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
    return url;
  }

  /** The server as messages name it: the base URL without a trailing slash. */
  get server(): string {
    return this.#base.href.replace(/\/$/, '');
  }

  /** `brain/<tenant>/project/<project>/` + `rest`. */
  #project(rest: string): string {
    const { tenant, project } = this.scope;
    return `brain/${encodeURIComponent(tenant)}/project/${encodeURIComponent(project)}/${rest}`;
  }

  /** A scheduler's resource path, its name checked as the service checks it (so a bad name gets the local error). */
  #scheduler(name: string, rest = ''): string {
    validateName(name, 'scheduler name');
    return this.#project(`scheduler/${encodeURIComponent(name)}${rest}`);
  }

  #tenant(rest: string): string {
    return `brain/${encodeURIComponent(this.scope.tenant)}/${rest}`;
  }

  /** Sends one request; returns the parsed JSON answer and its status. */
  async #send(call: Call): Promise<{ status: number; body: unknown }> {
    const url = new URL(call.path, this.#base);
    for (const [key, value] of Object.entries(call.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      authorization: `Bearer ${this.#token}`,
    };
    const init: RequestInit = { method: call.method, headers, signal: AbortSignal.timeout(this.#timeoutMs) };
    if (call.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(call.body);
    }
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url.href, init);
      text = await response.text();
    } catch (error) {
      throw new InfrastructureError(
        'STORE_UNAVAILABLE',
        `cannot reach the Ursa server at ${this.server}: ${reasonOf(error, this.#timeoutMs)}`,
        { field: 'url', value: this.server },
      );
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  }

  /** Sends one request and returns its JSON answer, or throws the error the server answered with. */
  async #call<T>(call: Call): Promise<T> {
    const { status, body } = await this.#send(call);
    if (status < 200 || status > 299) throw problemToError(status, body, this.server);
    if (body === undefined) {
      throw new InfrastructureError(
        'STORE_UNAVAILABLE',
        `the server at ${this.server} did not answer ${call.method} /${call.path} with JSON: is it an Ursa server?`,
      );
    }
    return body as T;
  }

  listSchedulers(options: { readonly all?: boolean } = {}): Promise<C.SchedulerList> {
    return this.#call<C.SchedulerList>({
      method: 'GET',
      path: this.#project('scheduler'),
      query: options.all ? { all: 'true' } : {},
    });
  }

  getScheduler(name: string): Promise<C.SchedulerDetail> {
    return this.#call({ method: 'GET', path: this.#scheduler(name) });
  }

  setScheduler(name: string, yaml: string): Promise<C.SetView> {
    return this.#call({
      method: 'PUT',
      path: this.#scheduler(name),
      body: { yaml },
    });
  }

  deleteScheduler(name: string): Promise<DeleteView> {
    return this.#call({ method: 'DELETE', path: this.#scheduler(name) });
  }

  fire(name: string): Promise<C.FireView> {
    return this.#call({ method: 'POST', path: this.#scheduler(name, '/fire') });
  }

  backfill(name: string, from: string, to: string): Promise<C.BackfillView> {
    return this.#call({ method: 'POST', path: this.#scheduler(name, '/backfill'), body: { from, to } });
  }

  upcoming(name: string, request: { count: number; from?: string | undefined }): Promise<C.Upcoming> {
    return this.#call({
      method: 'GET',
      path: this.#scheduler(name, '/upcoming'),
      query: { count: request.count, from: request.from },
    });
  }

  describe(name: string, count: number): Promise<C.SchedulerDescription> {
    return this.#call({
      method: 'GET',
      path: this.#scheduler(name, '/describe'),
      query: { count },
    });
  }

  pause(name: string, note: string): Promise<C.PauseResult> {
    return this.#call({
      method: 'POST',
      path: this.#scheduler(name, '/pause'),
      body: { note },
    });
  }

  resume(name: string): Promise<C.PauseResult> {
    return this.#call({
      method: 'POST',
      path: this.#scheduler(name, '/resume'),
    });
  }

  /** The server's own scheduling loop (`/readyz`): a server runs a worker beside its API. */
  async workerRunning(): Promise<boolean | undefined> {
    try {
      const { status, body } = await this.#send({ method: 'GET', path: 'readyz' });
      if (status === 200) return (body as { loop?: unknown } | undefined)?.loop === true;
      return status === 503 ? false : undefined;
    } catch {
      return undefined;
    }
  }

  runs(name: string, page: C.PageRequest): Promise<C.RunPage> {
    return this.#call({
      method: 'GET',
      path: this.#scheduler(name, '/runs'),
      query: { limit: page.limit, before: page.before },
    });
  }

  events(name: string, page: C.PageRequest): Promise<C.EventPage> {
    return this.#call({
      method: 'GET',
      path: this.#scheduler(name, '/events'),
      query: { limit: page.limit, before: page.before },
    });
  }

  feed(request: C.FeedRequest): Promise<C.EventPage> {
    const { limit, before, scheduler, kind, correlationId, since, until } = request;
    return this.#call({
      method: 'GET',
      path: this.#project('feed'),
      query: { limit, before, scheduler, kind, correlationId, since, until },
    });
  }

  /**
   * The project (`POST …/scheduler/refresh`; a delta refresh of one `name` is a project refresh
   * here, with the same result) or, with `allProjects`, the tenant (`POST /brain/:tenant/scheduler/refresh`).
   */
  async refresh(options: { name?: string | undefined; allProjects?: boolean }): Promise<C.RefreshView[]> {
    const { tenant, project } = this.scope;
    if (options.allProjects) {
      const body = await this.#call<TenantRefreshView>({
        method: 'POST',
        path: this.#tenant('scheduler/refresh'),
      });
      return body.projects.map((p) => ({ ...p, tenant }));
    }
    const body = await this.#call<ProjectRefreshView>({
      method: 'POST',
      path: this.#project('scheduler/refresh'),
    });
    return [{ tenant, project, active: body.active, registered: body.registered, invalid: body.invalid }];
  }

  run(correlationId: string): Promise<C.RunDetail> {
    return this.#call({ method: 'GET', path: this.#project(`runs/${encodeURIComponent(correlationId)}`) });
  }

  docCat(path: string): Promise<C.DocumentView> {
    return this.#call({ method: 'GET', path: this.#project(`documents/${segments(path)}`) });
  }

  docHistory(path: string, page: C.PageRequest): Promise<C.HistoryPage> {
    return this.#call({
      method: 'GET',
      path: this.#project(`documents/${segments(path)}/history`),
      query: { limit: page.limit, before: page.before },
    });
  }

  /** Every page of `GET …/documents?prefix=` (the API pages by path). */
  async docLs(prefix: string): Promise<C.DocumentSummary[]> {
    const documents: C.DocumentSummary[] = [];
    let after: string | undefined;
    do {
      const page = await this.#call<DocumentPage>({
        method: 'GET',
        path: this.#project('documents'),
        query: { prefix, limit: DOCUMENT_PAGE, after },
      });
      documents.push(...page.documents);
      after = page.nextCursor ?? undefined;
    } while (after !== undefined);
    return documents;
  }

  /** `GET /brain/:tenant/inbox`: without `user`, the server shows the token's user's items. */
  async inbox(request: C.InboxRequest): Promise<C.InboxPage> {
    const page = await this.#call<InboxItemPage>({
      method: 'GET',
      path: this.#tenant('inbox'),
      query: {
        user: request.user,
        all: request.all ? 'true' : undefined,
        limit: request.limit,
        before: request.before,
      },
    });
    return {
      user: request.user ?? page.items[0]?.user ?? null,
      items: page.items,
      nextCursor: page.nextCursor,
    };
  }

  async inboxRead(
    user: string | undefined,
    ids: readonly number[],
  ): Promise<{ user: string | null; count: number }> {
    const request: MarkReadBody = user === undefined ? { ids: [...ids] } : { ids: [...ids], user };
    const body = await this.#call<MarkReadView>({
      method: 'POST',
      path: this.#tenant('inbox/read'),
      body: request,
    });
    return { user: user ?? null, count: body.marked };
  }

  inboxAnswer(user: string | undefined, id: number, answer: string): Promise<C.AnswerView> {
    const body = user === undefined ? { answer } : { answer, user };
    return this.#call({ method: 'POST', path: this.#tenant(`inbox/${id}/answer`), body });
  }

  processStop(processId: string, reason: string): Promise<StopView> {
    const body: StopBody = { reason };
    return this.#call({
      method: 'POST',
      path: this.#project(`processes/${encodeURIComponent(processId)}/stop`),
      body,
    });
  }

  /** A recipe's or workflow's resource path, its name checked as the service checks it. */
  #named(kind: 'recipes' | 'workflows', name: string): string {
    validateName(name, kind === 'recipes' ? 'recipe name' : 'workflow name');
    return this.#project(`${kind}/${encodeURIComponent(name)}`);
  }

  listRecipes(): Promise<C.RecipeList> {
    return this.#call({ method: 'GET', path: this.#project('recipes') });
  }

  getRecipe(name: string): Promise<C.RecipeDetail> {
    return this.#call({ method: 'GET', path: this.#named('recipes', name) });
  }

  setRecipe(name: string, yaml: string): Promise<C.WorkflowSetView> {
    return this.#call({ method: 'PUT', path: this.#named('recipes', name), body: { yaml } });
  }

  deleteRecipe(name: string): Promise<DeleteView> {
    return this.#call({ method: 'DELETE', path: this.#named('recipes', name) });
  }

  deleteWorkflow(name: string): Promise<DeleteView> {
    return this.#call({ method: 'DELETE', path: this.#named('workflows', name) });
  }

  async close(): Promise<void> {}
}
