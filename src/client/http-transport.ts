import { InfrastructureError, UrsaError } from '../errors/index.js';
import { problemToError, reasonOf } from './http-errors.js';

/** The part of the global `fetch` the client uses (tests pass their own). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** How long one request may take before the client gives up, milliseconds. */
const REQUEST_TIMEOUT_MS = 30_000;

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Call {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
}

/**
 * One Ursa server over HTTP (issue #7 item 7): JSON requests with a bearer token, answers parsed,
 * problems turned back into the {@link UrsaError}s the server raised ({@link problemToError}); a
 * server that cannot be reached, or answers with something else than JSON, is
 * `STORE_UNAVAILABLE`, naming the URL.
 */
export class HttpTransport {
  readonly #base: URL;
  readonly #token: string;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;

  /** @throws UrsaError `ARGUMENT_INVALID` for a base URL that is not an http(s) URL. */
  constructor(options: {
    baseUrl: string;
    token: string;
    fetch?: Fetch | undefined;
    timeoutMs?: number | undefined;
  }) {
    this.#base = HttpTransport.parseUrl(options.baseUrl);
    this.#token = options.token;
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

  /** Sends one request; returns the parsed JSON answer and its status. */
  async send(call: Call): Promise<{ status: number; body: unknown }> {
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
  async call<T>(call: Call): Promise<T> {
    const { status, body } = await this.send(call);
    if (status < 200 || status > 299) throw problemToError(status, body, this.server);
    if (body === undefined) {
      throw new InfrastructureError(
        'STORE_UNAVAILABLE',
        `the server at ${this.server} did not answer ${call.method} /${call.path} with JSON: is it an Ursa server?`,
      );
    }
    return body as T;
  }
}
