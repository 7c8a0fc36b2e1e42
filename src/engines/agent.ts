import { type Dispatcher, fetch as undiciFetch } from 'undici';
import type { Engine, EngineRequest, EngineResult, HandOffAnswer, HandOffStop } from './engine.js';
import { type HttpEngineOptions, type HttpRunPayload, httpRunPayload, outboundRulesOf } from './http.js';
import { networkCode, type Prepared, prepare, readPrefix } from './http-request.js';
import { guardedAgent, OutboundRefused } from './outbound-connect.js';
import { Secrets } from './secret-forms.js';
import { stopReason } from './stop-reason.js';

/** The JSON document an `agent` run POSTs to its service (issue #25): the `http` engine's, and where to call back. */
export interface AgentRunPayload extends HttpRunPayload {
  readonly callback: {
    /**
     * The run's callback URL: the service POSTs to `<url>/status`, `/heartbeat`, `/output` and
     * `/complete`, each with `Authorization: Bearer <credential>`.
     */
    readonly url: string;
    /** The attempt's run credential: valid for this run's callbacks until the run ends, nothing else. */
    readonly credential: string;
    /**
     * The recipe's `heartbeatTimeout`, ms: Ursa ends the run `heartbeat-timeout` once the service
     * has not called back for longer, so a service that cannot reach Ursa for that long stops its
     * run (Ursa is gone, or has ended it).
     */
    readonly heartbeatTimeoutMs?: number;
  };
}

/** How long the service may take to answer the start of a run (its 202), milliseconds. */
export const AGENT_START_TIMEOUT_MS = 30_000;
/** How long the service may take to take a stop or an answer, milliseconds: past it, the send is tried again later. */
export const AGENT_DELIVERY_TIMEOUT_MS = 10_000;
/** Longest run reference a service may answer, characters. */
export const AGENT_REFERENCE_MAX = 200;
/** Bytes of a start's response body read (its JSON with the reference). */
const START_BODY_BYTES = 4096;

/** The document an `agent` run POSTs for `request`; undefined without a `callback`. */
export function agentRunPayload(request: EngineRequest): AgentRunPayload | undefined {
  const { callback } = request;
  if (callback === undefined) return undefined;
  const { heartbeatTimeoutMs } = request.recipe;
  return {
    ...httpRunPayload(request),
    callback: {
      url: callback.url,
      credential: callback.credential,
      ...(heartbeatTimeoutMs === undefined ? {} : { heartbeatTimeoutMs }),
    },
  };
}

/**
 * Creates the `agent` engine (issue #25): a run is handed to an agent service and goes on there,
 * with no connection held. It POSTs {@link agentRunPayload} to `recipe.url` exactly as the `http`
 * engine sends (same headers, `Idempotency-Key` of the occurrence, `Ursa-Fencing-Token`, secret
 * headers, the outbound policy on every connection, no redirect followed), and expects
 * `202 Accepted` with a JSON body `{"reference": "<the service's run id>"}` within
 * {@link AGENT_START_TIMEOUT_MS}:
 *
 * - 202 with a reference (1 to {@link AGENT_REFERENCE_MAX} characters) → `accepted`, `reference`
 *   set: the worker leaves the run active; the service's callbacks (or its silence, past the
 *   recipe's `heartbeatTimeout`) end it.
 * - Any other answer → `failed`: `HTTP <status> <text>`, `expected 202 Accepted, got HTTP 200 OK`,
 *   `the agent service answered 202 without a run reference`; the reasons of the `http` engine
 *   for what is never sent or cannot reach the service.
 * - No `request.callback` (the worker has no `publicUrl`) → `failed` before anything is sent.
 * - `request.signal` aborted → `stopped`.
 *
 * Its `stop` POSTs `{"reason", "correlationId", "fencingToken", "attempt"}` to
 * `<url>/<reference>/stop` with the same headers: a 2xx is taken (the service confirms with its
 * `complete` callback, status `stopped`). Its `answer` POSTs `{"questionId", "answer",
 * "answeredBy", "correlationId", "fencingToken", "attempt"}` to `<url>/<reference>/answer`.
 *
 * The promises never reject; secret values never reach a reason.
 *
 * @throws UrsaError `ARGUMENT_INVALID` when an `outbound` entry is neither a host pattern nor an
 *   address range.
 */
export function createAgentEngine(options: HttpEngineOptions = {}): Engine {
  const rules = outboundRulesOf(options);
  let agent: Dispatcher | undefined;
  const secretHosts = options.secretHosts ?? {};
  // A POST to `<url>/<reference>/<what>` of a handed-off run, with the run's headers: taken on 2xx.
  const postToRun = async (
    run: HandOffStop | HandOffAnswer,
    what: 'stop' | 'answer',
    fields: Record<string, unknown>,
  ): Promise<{ readonly taken: true } | { readonly taken: false; readonly reason: string }> => {
    let secrets = new Secrets([]);
    try {
      const request = runRequest(run, what);
      if (request === undefined)
        return {
          taken: false,
          reason: 'the recipe has no usable url, or the reference would lead out of it',
        };
      const prepared = prepare(request, options.env ?? process.env, secretHosts, {
        ...fields,
        ...attemptOf(run),
      });
      if (typeof prepared === 'string') return { taken: false, reason: prepared };
      secrets = prepared.secrets;
      agent ??= guardedAgent(rules, options.lookup);
      const doFetch = options.fetch ?? (undiciFetch as unknown as typeof fetch);
      const response = await doFetch(prepared.url, {
        method: 'POST',
        headers: prepared.headers,
        body: prepared.body,
        redirect: 'manual',
        signal: request.signal,
        dispatcher: agent as unknown as NonNullable<RequestInit['dispatcher']>,
      });
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status <= 299) return { taken: true };
      return {
        taken: false,
        reason: secrets.redact(`HTTP ${response.status} ${response.statusText}`.trim()),
      };
    } catch (error) {
      const refused = (error as { cause?: unknown })?.cause;
      if (refused instanceof OutboundRefused) return { taken: false, reason: refused.message };
      return {
        taken: false,
        reason: secrets.redact(`cannot reach the agent service: ${networkCode(error)}`),
      };
    }
  };
  return {
    name: 'agent',
    handsOff: true,
    run: async (request) => {
      if (request.signal.aborted) return { status: 'stopped', reason: stopReason(request.signal) };
      const payload = agentRunPayload(request);
      if (payload === undefined)
        return failed('this server has no public URL (publicUrl) for the agent service to call back');
      let secrets = new Secrets([]);
      try {
        const prepared = prepare(request, options.env ?? process.env, secretHosts, payload);
        if (typeof prepared === 'string') return failed(prepared);
        secrets = prepared.secrets;
        agent ??= guardedAgent(rules, options.lookup);
        const doFetch = options.fetch ?? (undiciFetch as unknown as typeof fetch);
        return await start(prepared, request, doFetch, agent);
      } catch (error) {
        return failed(secrets.redact(`agent engine error: ${(error as Error)?.message ?? String(error)}`));
      }
    },
    stop: (stop) =>
      postToRun(stop, 'stop', { reason: stop.reason, correlationId: stop.context.correlationId }),
    answer: (answer) =>
      postToRun(answer, 'answer', {
        questionId: answer.questionId,
        answer: answer.answer,
        answeredBy: answer.answeredBy,
        correlationId: answer.context.correlationId,
      }),
  };
}

/**
 * A stop or an answer of a handed-off run as a request to prepare: `POST <url path>/<reference>/<what>`
 * (the recipe's URL with the reference and `stop` or `answer` appended to its path, its query kept), within
 * {@link AGENT_DELIVERY_TIMEOUT_MS}; undefined when the recipe's URL does not parse, or the reference
 * would lead out of its path.
 */
function runRequest(stop: HandOffStop | HandOffAnswer, what: 'stop' | 'answer'): EngineRequest | undefined {
  let url: URL;
  try {
    url = new URL(stop.recipe.url ?? '');
  } catch {
    return undefined;
  }
  const base = url.pathname.replace(/\/+$/, '');
  url.pathname = `${base}/${encodeURIComponent(stop.reference)}/${what}`;
  // Under the recipe's URL or nowhere: a reference never walks out of it.
  if (!url.pathname.startsWith(`${base}/`) || /^\.+$/.test(stop.reference)) return undefined;
  return {
    processId: stop.processId,
    recipe: { ...stop.recipe, url: url.href },
    params: {},
    initialMessage: undefined,
    context: stop.context,
    signal: AbortSignal.timeout(AGENT_DELIVERY_TIMEOUT_MS),
  };
}

function attemptOf(stop: HandOffStop | HandOffAnswer): { fencingToken?: number; attempt?: number } {
  const { fencingToken, attempt } = stop.context;
  return {
    ...(fencingToken === undefined ? {} : { fencingToken }),
    ...(attempt === undefined ? {} : { attempt }),
  };
}

async function start(
  prepared: Prepared,
  request: EngineRequest,
  doFetch: typeof fetch,
  dispatcher: Dispatcher,
): Promise<EngineResult> {
  const { secrets } = prepared;
  const deadline = AbortSignal.timeout(AGENT_START_TIMEOUT_MS);
  const signal = AbortSignal.any([request.signal, deadline]);
  const why = (): EngineResult | undefined => {
    if (request.signal.aborted) return { status: 'stopped', reason: stopReason(request.signal) };
    if (deadline.aborted)
      return failed(`the agent service did not answer within ${AGENT_START_TIMEOUT_MS} ms`);
    return undefined;
  };
  let response: Response;
  try {
    response = await doFetch(prepared.url, {
      method: 'POST',
      headers: prepared.headers,
      body: prepared.body,
      redirect: 'manual',
      signal,
      dispatcher: dispatcher as unknown as NonNullable<RequestInit['dispatcher']>,
    });
  } catch (error) {
    const cut = why();
    if (cut !== undefined) return cut;
    const refused = (error as { cause?: unknown })?.cause;
    if (refused instanceof OutboundRefused) return failed(refused.message);
    return failed(secrets.redact(`cannot reach ${prepared.url.origin}: ${networkCode(error)}`));
  }
  const body = (await readPrefix(response.body, START_BODY_BYTES)).toString('utf8');
  const cut = why();
  if (cut !== undefined) return cut;
  const status = `HTTP ${response.status} ${response.statusText}`.trim();
  if (response.status < 200 || response.status > 299) return failed(secrets.redact(status));
  if (response.status !== 202) return failed(secrets.redact(`expected 202 Accepted, got ${status}`));
  const reference = referenceOf(body);
  if (reference === undefined)
    return failed(
      `the agent service answered 202 without a run reference: expected a JSON body {"reference": "<1 to ${AGENT_REFERENCE_MAX} characters, no control characters, not dots only>"}`,
    );
  return { status: 'accepted', reference };
}

/** The `reference` of a 202's JSON body, when it is a string of 1 to 200 characters without controls. */
function referenceOf(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const reference = (parsed as { reference?: unknown } | null)?.reference;
  if (typeof reference !== 'string' || reference.length === 0 || reference.length > AGENT_REFERENCE_MAX)
    return undefined;
  // A reference of dots only would be a `.` or `..` path step of the stop and answer URLs.
  if (/^\.+$/.test(reference)) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  return /[\u0000-\u001f\u007f]/.test(reference) ? undefined : reference;
}

function failed(reason: string): EngineResult {
  return { status: 'failed', reason };
}
