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
import { validateName } from '../scheduler/name.js';
import { type Call, type Fetch, HttpTransport } from './http-transport.js';
import type * as C from './types.js';

export type { Fetch } from './http-transport.js';

/** Documents per page of `GET …/documents` (the most the API gives). */
const DOCUMENT_PAGE = 1000;

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
  readonly #http: HttpTransport;

  constructor(options: HttpClientOptions) {
    this.#http = new HttpTransport(options);
    this.scope = options.scope;
  }

  /**
   * A server base URL as given to `--url`: `http://` or `https://`, no query or fragment.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for anything else.
   */
  static parseUrl(text: string): URL {
    return HttpTransport.parseUrl(text);
  }

  /** The server as messages name it: the base URL without a trailing slash. */
  get server(): string {
    return this.#http.server;
  }

  /** Sends one request and returns its JSON answer, or throws the error the server answered with. */
  #call<T>(call: Call): Promise<T> {
    return this.#http.call<T>(call);
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
      const { status, body } = await this.#http.send({ method: 'GET', path: 'readyz' });
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

  listWorkflows(): Promise<C.WorkflowList> {
    return this.#call({ method: 'GET', path: this.#project('workflows') });
  }

  getWorkflow(name: string): Promise<C.DocumentView> {
    return this.#call({ method: 'GET', path: this.#named('workflows', name) });
  }

  setWorkflow(name: string, yaml: string): Promise<C.WorkflowSetView> {
    return this.#call({ method: 'PUT', path: this.#named('workflows', name), body: { yaml } });
  }

  deleteWorkflow(name: string): Promise<DeleteView> {
    return this.#call({ method: 'DELETE', path: this.#named('workflows', name) });
  }

  /**
   * Starts a run of workflow `name` on the server, where it runs in the background (a local
   * store's CLI runs one in its own process instead). `params` are the workflow's parameters.
   *
   * @throws UrsaError `NOT_FOUND`, `WORKFLOW_INVALID`, `ARGUMENT_INVALID` (params), as the server says.
   */
  startWorkflow(name: string, params: Readonly<Record<string, unknown>>): Promise<C.WorkflowRunView> {
    const body: C.WorkflowStartBody = { params: { ...params } };
    return this.#call({ method: 'POST', path: `${this.#named('workflows', name)}/runs`, body });
  }

  workflowRun(id: string): Promise<C.WorkflowRunView> {
    return this.#call({ method: 'GET', path: this.#project(`workflow-runs/${encodeURIComponent(id)}`) });
  }

  stopWorkflowRun(id: string): Promise<C.WorkflowStopView> {
    return this.#call({
      method: 'POST',
      path: this.#project(`workflow-runs/${encodeURIComponent(id)}/stop`),
    });
  }

  async close(): Promise<void> {}
}
