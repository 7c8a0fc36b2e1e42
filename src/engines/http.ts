import { type Dispatcher, fetch as undiciFetch } from 'undici';
import { UrsaError } from '../errors/index.js';
import {
  type Listener,
  OUTBOUND_ENTRY_ALLOWED,
  type OutboundEntry,
  type OutboundRules,
  parseOutboundEntry,
} from '../net/outbound-policy.js';
import type { SecretHosts } from '../net/secret-hosts.js';
import { formatInstant } from '../time/instant.js';
import type { Engine, EngineRequest, EngineResult } from './engine.js';
import { networkCode, type Prepared, prepare, readPrefix } from './http-request.js';
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

export {
  FENCING_TOKEN_HEADER,
  type IdempotencyKeyParts,
  idempotencyKey,
} from './http-request.js';

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

/** How long an `http` run may take when its recipe sets no `timeout`: 30 s. */
export const HTTP_DEFAULT_TIMEOUT_MS = 30_000;

const DEFAULT_BODY_EXCERPT_BYTES = 4096;
/** Longest delay a Node timer honours; a larger one would fire after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

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
  const rules = outboundRulesOf(options);
  let agent: Dispatcher | undefined;
  const secretHosts = options.secretHosts ?? {};
  return {
    name: 'http',
    run: async (request) => {
      if (request.signal.aborted) return { status: 'stopped', reason: stopReason(request.signal) };
      let secrets: Secrets = new Secrets([]);
      try {
        const prepared = prepare(request, options.env ?? process.env, secretHosts, httpRunPayload(request));
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

/**
 * The outbound policy of `options` (issue #19), as the `http` and `agent` engines apply it.
 *
 * @throws UrsaError `ARGUMENT_INVALID` when an `outbound` entry is neither a host pattern nor an
 *   address range.
 */
export function outboundRulesOf(options: HttpEngineOptions): OutboundRules {
  return {
    allow: outboundEntries('outbound.allow', options.outbound?.allow),
    deny: outboundEntries('outbound.deny', options.outbound?.deny),
    listeners: options.outbound?.listeners ?? [],
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
