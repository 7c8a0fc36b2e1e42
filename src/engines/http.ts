import { createHash } from 'node:crypto';
import { type Dispatcher, fetch as undiciFetch } from 'undici';
import { UrsaError } from '../errors/index.js';
import { urlHost } from '../net/host-pattern.js';
import {
  type Listener,
  OUTBOUND_ENTRY_ALLOWED,
  type OutboundEntry,
  type OutboundRules,
  parseOutboundEntry,
} from '../net/outbound-policy.js';
import { type SecretHosts, secretHostRefusal } from '../net/secret-hosts.js';
import {
  headerNameProblem,
  headerValueProblem,
  httpUrlProblem,
  secretEnvNameProblem,
} from '../recipes/http-fields.js';
import { formatInstant } from '../time/instant.js';
import type { Engine, EngineRequest, EngineResult } from './engine.js';
import { guardedAgent, type HostLookup, OutboundRefused } from './outbound-connect.js';
import { Secrets } from './secret-forms.js';
import { stopReason } from './stop-reason.js';

/** Options of {@link createHttpEngine}. Every field is optional. */
export interface HttpEngineOptions {
  /**
   * Where the variables named in a recipe's `secretHeaders` are read from, at each run; default
   * `process.env`. Only the named variables are read.
   */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * The `fetch` to send with; default undici's. It is handed the outbound policy as
   * `init.dispatcher`: a replacement that ignores it connects wherever it likes.
   */
  readonly fetch?: typeof fetch;
  /**
   * Where the engine may connect (operator settings `outboundAllow`, `outboundDeny`; issue #19):
   * entries as {@link parseOutboundEntry} reads them, and Ursa's own HTTP `listeners`. Default: no
   * lists, no listener; the ranges denied by default are refused either way.
   */
  readonly outbound?: {
    readonly allow?: readonly string[];
    readonly deny?: readonly string[];
    readonly listeners?: readonly Listener[];
  };
  /** The hosts each secret variable may be sent to (operator setting `secretHosts`); default none bound. */
  readonly secretHosts?: SecretHosts;
  /** Resolves host names for the outbound check and the connection; default the system resolver. */
  readonly lookup?: HostLookup;
  /**
   * Bytes kept from the start of the response body for the run log (`EngineResult.output`).
   * Integer from 0 to 2^31−1; default 4096.
   */
  readonly bodyExcerptBytes?: number;
}

/** The occurrence an `Idempotency-Key` is derived from: {@link EngineRequest}'s `context`, or part of it. */
export type IdempotencyKeyParts = Pick<
  EngineRequest['context'],
  'tenant' | 'project' | 'scheduler' | 'scheduledFor'
>;

/** The JSON document an `http` run POSTs (issue #5). */
export interface HttpRunPayload {
  /** The recipe's name. */
  readonly recipe: string;
  /** The recipe's default params with the scheduler's params merged over them. */
  readonly params: Readonly<Record<string, unknown>>;
  readonly initialMessage: string | null;
  readonly trigger: {
    readonly scheduler: string;
    readonly correlationId: string;
    /** The occurrence the run serves, ISO-8601 UTC (`2026-03-28T12:00:00Z`). */
    readonly scheduledFor: string;
    readonly tenant: string;
    readonly project: string;
    readonly runAs: string;
    /**
     * The fencing token of the run's attempt, also sent as the `Ursa-Fencing-Token` header: larger
     * for every later attempt of the scheduler, so a receiver can refuse a stale one (see
     * `EngineRequest.context`). Absent only for a step of a workflow run started by hand.
     */
    readonly fencingToken?: number;
    /** Which attempt of the run this is: 1, 2, …; absent with `fencingToken`. */
    readonly attempt?: number;
  };
}

/**
 * The header an `http` run carries its attempt's fencing token in, as a decimal integer (see
 * `EngineRequest.context`): the same occurrence keeps its `Idempotency-Key` across attempts, and a
 * later attempt carries a larger token.
 */
export const FENCING_TOKEN_HEADER = 'Ursa-Fencing-Token';

/** How long an `http` run may take when its recipe sets no `timeout`: 30 s. */
export const HTTP_DEFAULT_TIMEOUT_MS = 30_000;

const DEFAULT_BODY_EXCERPT_BYTES = 4096;
/** Longest delay a Node timer honours; a larger one would fire after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The `Idempotency-Key` of an occurrence: the first 32 hex digits (128 bits) of the SHA-256 of
 * the UTF-8 JSON text `[tenant, project, scheduler, scheduledFor]` as `JSON.stringify` writes it
 * (no spaces; `scheduledFor` as integer epoch milliseconds), e.g.
 * `["acme","web","nightly-report",1774699200000]` → `7cc28e753e020a52711c9250952f2a03`.
 *
 * Every delivery of one occurrence (a retry, a second worker, a coalesced run of the same
 * `scheduledFor`) carries the same key; another scheduler, project, tenant or occurrence gets
 * another, so a receiver can drop a repeat. The JSON array keeps the parts apart: no choice of
 * names can make two occurrences collide the way a joined string could.
 */
export function idempotencyKey(occurrence: IdempotencyKeyParts): string {
  const { tenant, project, scheduler, scheduledFor } = occurrence;
  const text = JSON.stringify([tenant, project, scheduler, scheduledFor]);
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
}

/** The document an `http` run POSTs for `request` (see {@link HttpRunPayload}). */
export function httpRunPayload(request: EngineRequest): HttpRunPayload {
  const { context } = request;
  return {
    recipe: request.recipe.name,
    params: request.params,
    initialMessage: request.initialMessage ?? null,
    trigger: {
      scheduler: context.scheduler,
      correlationId: context.correlationId,
      scheduledFor: formatInstant(context.scheduledFor),
      tenant: context.tenant,
      project: context.project,
      runAs: context.runAs,
      ...(context.fencingToken === undefined ? {} : { fencingToken: context.fencingToken }),
      ...(context.attempt === undefined ? {} : { attempt: context.attempt }),
    },
  };
}

/**
 * Creates the `http` engine (issue #5). A run POSTs {@link httpRunPayload} as JSON to
 * `recipe.url` with the headers `Content-Type: application/json`, `Idempotency-Key`
 * ({@link idempotencyKey}), `Ursa-Fencing-Token` ({@link FENCING_TOKEN_HEADER}, when the request
 * has a token), `traceparent` (the run's span, when tracing is on), the recipe's `headers` and,
 * for each `secretHeaders` entry, the value of
 * the named environment variable read from `env` at run time. Redirects are not followed (a 3xx
 * ends `failed`), so no header — secret or not — is ever sent to another address.
 *
 * - 2xx → `done`; another status → `failed`, reason `HTTP <status> <statusText>`. Either way
 *   `output` is the first `bodyExcerptBytes` bytes of the response body, as UTF-8 (a character cut
 *   in half at the end is dropped); the rest of the body is not read.
 * - `recipe.timeoutMs` (unset: {@link HTTP_DEFAULT_TIMEOUT_MS}; 0 or above 2^31−1: no limit)
 *   passed before the response body was read → `failed`, reason `timeout after N ms`.
 * - `request.signal` aborted → `stopped`, reason the abort reason when it is a string, else
 *   `stopped`. An already aborted signal sends nothing.
 * - The server cannot be reached → `failed`, reason `cannot reach <origin>: <code>` (e.g.
 *   `ECONNREFUSED`, `ENOTFOUND`): the origin only, never the path or query, which may hold a token.
 * - Nothing is sent, `failed`, when the recipe has no usable `url` (`recipe has no url`, `url …`),
 *   a header is not allowed, a secret's variable is unset or empty (the reason names the VARIABLE,
 *   never a value), a secret is bound (`secretHosts`) to other hosts than the URL's, or the params
 *   cannot be written as JSON.
 * - The outbound policy refuses the address the host resolves to (checked for every connection,
 *   on the address connected to) → `failed` at once, reason `outbound policy refuses <host>
 *   (<address>) port <port>: <rule>`; nothing reaches the address.
 *
 * Secret values never reach `reason` or `output`: every form of one a server may echo (see
 * `secret-forms.ts`: the credential after its scheme word, URL-, JSON- and base64-encoded, in any
 * letter case) in the body excerpt, the status text or an error is replaced by `***`.
 * The promise never rejects.
 *
 * @throws UrsaError `ARGUMENT_INVALID` when `bodyExcerptBytes` is not an integer from 0 to 2^31−1,
 *   or an `outbound` entry is neither a host pattern nor an address range.
 */
export function createHttpEngine(options: HttpEngineOptions = {}): Engine {
  const excerptBytes = nonNegativeInteger(options.bodyExcerptBytes);
  const rules: OutboundRules = {
    allow: outboundEntries('outbound.allow', options.outbound?.allow),
    deny: outboundEntries('outbound.deny', options.outbound?.deny),
    listeners: options.outbound?.listeners ?? [],
  };
  let agent: Dispatcher | undefined;
  const secretHosts = options.secretHosts ?? {};
  return {
    name: 'http',
    run: async (request) => {
      if (request.signal.aborted) return { status: 'stopped', reason: stopReason(request.signal) };
      let secrets: Secrets = new Secrets([]);
      try {
        const prepared = prepare(request, options.env ?? process.env, secretHosts);
        if (typeof prepared === 'string') return failed(prepared);
        secrets = prepared.secrets;
        // One agent per engine, made at the first run: it keeps connections it checked for reuse.
        agent ??= guardedAgent(rules, options.lookup);
        const doFetch = options.fetch ?? (undiciFetch as unknown as typeof fetch);
        return await send(prepared, request, doFetch, agent, excerptBytes);
      } catch (error) {
        // Not expected: every known failure is a result. Still never reject, never leak a secret.
        return failed(secrets.redact(`http engine error: ${(error as Error)?.message ?? String(error)}`));
      }
    },
  };
}

/** The entries of one outbound list, parsed. */
function outboundEntries(field: string, texts: readonly string[] | undefined): OutboundEntry[] {
  return (texts ?? []).map((text, i) => {
    const entry = parseOutboundEntry(text);
    if (!('problem' in entry)) return entry;
    throw new UrsaError('ARGUMENT_INVALID', `${field}[${i}]: ${JSON.stringify(text)} ${entry.problem}`, {
      field: `${field}[${i}]`,
      value: text,
      allowed: OUTBOUND_ENTRY_ALLOWED,
    });
  });
}

interface Prepared {
  readonly url: URL;
  readonly headers: Headers;
  readonly body: string;
  readonly secrets: Secrets;
}

/** Everything to send, or the reason nothing is sent. No reason holds a header value. */
function prepare(
  request: EngineRequest,
  env: NodeJS.ProcessEnv,
  secretHosts: SecretHosts,
): Prepared | string {
  const { recipe } = request;
  if (recipe.url === undefined || recipe.url === '') return 'recipe has no url';
  const urlProblem = httpUrlProblem(recipe.url);
  if (urlProblem !== undefined) return `url ${urlProblem}`;
  const url = new URL(recipe.url);

  const headers = new Headers();
  const given = new Set<string>();
  const add = (kind: string, name: string, value: string, valueProblem: string | undefined): string => {
    const problem =
      headerNameProblem(name) ??
      (given.has(name.toLowerCase()) ? 'is given more than once' : undefined) ??
      valueProblem;
    if (problem !== undefined) return `${kind} ${JSON.stringify(name)}: ${problem}`;
    given.add(name.toLowerCase());
    headers.set(name, value);
    return '';
  };
  for (const [name, value] of Object.entries(recipe.headers ?? {})) {
    const problem = add('header', name, value, headerValueProblem(value));
    if (problem !== '') return problem;
  }
  const values: string[] = [];
  for (const [name, variable] of Object.entries(recipe.secretHeaders ?? {})) {
    const nameProblem =
      secretEnvNameProblem(variable) ?? secretHostRefusal(secretHosts, variable, urlHost(url));
    if (nameProblem !== undefined) return `secret header ${JSON.stringify(name)}: ${nameProblem}`;
    const value = env[variable];
    if (value === undefined || value === '') {
      return `secret header ${JSON.stringify(name)}: environment variable ${variable} is not set`;
    }
    const valueProblem =
      headerValueProblem(value) === undefined
        ? undefined
        : `environment variable ${variable} holds a character a header value cannot (a line break, NUL, another control character or one beyond Latin-1)`;
    const problem = add('secret header', name, value, valueProblem);
    if (problem !== '') return problem;
    values.push(value);
  }
  headers.set('Content-Type', 'application/json');
  headers.set('Idempotency-Key', idempotencyKey(request.context));
  if (request.context.fencingToken !== undefined)
    headers.set(FENCING_TOKEN_HEADER, String(request.context.fencingToken));
  // The run's span (issue #26 item 3): the receiver's spans join the run's trace.
  if (request.context.traceparent !== undefined) headers.set('traceparent', request.context.traceparent);

  let body: string;
  try {
    body = JSON.stringify(httpRunPayload(request));
  } catch (error) {
    return `params cannot be written as JSON: ${(error as Error).message}`;
  }
  return { url, headers, body, secrets: new Secrets(values) };
}

/** Why the engine gave up on a request before it ended by itself. */
type Cause = { readonly kind: 'timeout'; readonly ms: number } | { readonly kind: 'stop' };

async function send(
  prepared: Prepared,
  request: EngineRequest,
  doFetch: typeof fetch,
  dispatcher: Dispatcher,
  excerptBytes: number,
): Promise<EngineResult> {
  const { secrets } = prepared;
  const timeoutMs = request.recipe.timeoutMs ?? HTTP_DEFAULT_TIMEOUT_MS;
  const limited = timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS;
  const deadline = limited ? AbortSignal.timeout(timeoutMs) : undefined;
  const signal = deadline === undefined ? request.signal : AbortSignal.any([request.signal, deadline]);
  const cause = (): Cause | undefined => {
    if (!signal.aborted) return undefined;
    if (deadline?.aborted && signal.reason === deadline.reason) return { kind: 'timeout', ms: timeoutMs };
    return { kind: 'stop' };
  };
  const ended = (why: Cause, output?: string): EngineResult => {
    const extra = output === undefined ? {} : { output };
    return why.kind === 'stop'
      ? { status: 'stopped', reason: stopReason(request.signal), ...extra }
      : { status: 'failed', reason: `timeout after ${why.ms} ms`, ...extra };
  };

  let response: Response;
  try {
    response = await doFetch(prepared.url, {
      method: 'POST',
      headers: prepared.headers,
      body: prepared.body,
      redirect: 'manual',
      signal,
      // undici's Dispatcher type, not the copy Node's typings of the global fetch carry.
      dispatcher: dispatcher as unknown as NonNullable<RequestInit['dispatcher']>,
    });
  } catch (error) {
    const why = cause();
    if (why !== undefined) return ended(why);
    const refused = (error as { cause?: unknown })?.cause;
    if (refused instanceof OutboundRefused) return failed(refused.message);
    return failed(secrets.redact(`cannot reach ${prepared.url.origin}: ${networkCode(error)}`));
  }

  const window = await readPrefix(
    response.body,
    excerptBytes === 0 ? 0 : excerptBytes + secrets.longestBytes,
  );
  const output = secrets.excerpt(window, excerptBytes);
  const why = cause();
  if (why !== undefined) return ended(why, output);
  if (response.status >= 200 && response.status <= 299) return { status: 'done', output };
  const reason = `HTTP ${response.status} ${response.statusText}`.trim();
  return { status: 'failed', reason: secrets.redact(reason), output };
}

/**
 * Reads the first `limit` bytes of a response body (fewer when it is shorter), then cancels the
 * rest. A body that breaks off (reset, abort, timeout) gives what arrived before.
 */
async function readPrefix(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Buffer> {
  if (body === null) return Buffer.alloc(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.length;
    }
  } catch {
    // The body broke off; the caller looks at the signal to say why when it was the engine.
  }
  await reader.cancel().catch(() => {});
  return Buffer.concat(chunks);
}

/**
 * The OS or client code of a failed `fetch` (`ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_SOCKET`,
 * `CERT_HAS_EXPIRED`, …): undici rejects with `TypeError('fetch failed')` whose `cause` says why.
 */
function networkCode(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause ?? error;
  const code = codeOf(cause) ?? codeOf((cause as { errors?: unknown[] })?.errors?.[0]);
  if (code !== undefined) return code;
  const message = (cause as Error)?.message;
  return typeof message === 'string' && message !== '' ? message : 'network error';
}

function codeOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

function failed(reason: string): EngineResult {
  return { status: 'failed', reason };
}

function nonNegativeInteger(value: number | undefined): number {
  if (value === undefined) return DEFAULT_BODY_EXCERPT_BYTES;
  if (Number.isSafeInteger(value) && value >= 0 && value <= MAX_TIMER_MS) return value;
  throw new UrsaError(
    'ARGUMENT_INVALID',
    `bodyExcerptBytes: ${value} is not an integer from 0 to ${MAX_TIMER_MS}`,
    { field: 'bodyExcerptBytes', value, allowed: `an integer from 0 to ${MAX_TIMER_MS}` },
  );
}
