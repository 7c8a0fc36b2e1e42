import { createHash } from 'node:crypto';
import { urlHost } from '../net/host-pattern.js';
import { type SecretHosts, secretHostRefusal } from '../net/secret-hosts.js';
import {
  headerNameProblem,
  headerValueProblem,
  httpUrlProblem,
  secretEnvNameProblem,
} from '../recipes/http-fields.js';
import type { EngineRequest } from './engine.js';
import { Secrets } from './secret-forms.js';

/**
 * What the `http` and `agent` engines share (issues #5, #25): the `Idempotency-Key` of an
 * occurrence, the fencing-token header, a request's preparation (URL, headers, secret headers,
 * body) and the reading of a response.
 */

/** The occurrence an `Idempotency-Key` is derived from: {@link EngineRequest}'s `context`, or part of it. */
export type IdempotencyKeyParts = Pick<
  EngineRequest['context'],
  'tenant' | 'project' | 'scheduler' | 'scheduledFor'
>;

/**
 * The header an `http` run carries its attempt's fencing token in, as a decimal integer (see
 * `EngineRequest.context`): the same occurrence keeps its `Idempotency-Key` across attempts, and a
 * later attempt carries a larger token.
 */
export const FENCING_TOKEN_HEADER = 'Ursa-Fencing-Token';

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

/** A request ready to send: its URL, headers (secret ones included), body and the secrets to redact. */
export interface Prepared {
  readonly url: URL;
  readonly headers: Headers;
  readonly body: string;
  readonly secrets: Secrets;
}

/**
 * Everything an `http` or `agent` run sends (issues #5, #25), or the reason nothing is sent: the
 * recipe's `url`, its headers and secret headers (read from `env`, each checked against
 * `secretHosts`), `Content-Type`, `Idempotency-Key` and `Ursa-Fencing-Token`, and `payload` as
 * JSON. No reason holds a header value.
 */
export function prepare(
  request: EngineRequest,
  env: NodeJS.ProcessEnv,
  secretHosts: SecretHosts,
  payload: unknown,
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
    body = JSON.stringify(payload);
  } catch (error) {
    return `params cannot be written as JSON: ${(error as Error).message}`;
  }
  return { url, headers, body, secrets: new Secrets(values) };
}

/**
 * Reads the first `limit` bytes of a response body (fewer when it is shorter), then cancels the
 * rest. A body that breaks off (reset, abort, timeout) gives what arrived before.
 */
export async function readPrefix(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Buffer> {
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
export function networkCode(error: unknown): string {
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
