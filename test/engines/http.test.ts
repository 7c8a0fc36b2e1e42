import { describe, expect, it, vi } from 'vitest';
import type { EngineRequest } from '../../src/engines/engine.js';
import {
  createHttpEngine,
  HTTP_DEFAULT_TIMEOUT_MS,
  httpRunPayload,
  idempotencyKey,
} from '../../src/engines/http.js';
import { isUrsaError, type UrsaError } from '../../src/errors/index.js';
import { type Handler, reply, startHookServer as startServer } from '../support/hook-server.js';
import { type HttpEngineRequestOptions, httpEngineRequest } from '../support/http-run.js';
import { context } from './helpers.js';

// Issue #5: the `http` engine POSTs {recipe, params, initialMessage, trigger} as JSON with an
// Idempotency-Key derived from the occurrence; secrets come from environment variables named in
// the recipe and never reach a log (decisions §6). Every test talks to a real server on 127.0.0.1.

/** Never answers. */
const silent: Handler = () => {};

/**
 * A request for the `briefing` recipe POSTing to `url`, with no timeout of its own, in the
 * {@link context} of the engine tests.
 */
function httpRequest(url: string | undefined, options: HttpEngineRequestOptions = {}): EngineRequest {
  return httpEngineRequest(url, {
    ...options,
    recipe: { name: 'briefing', description: 'posts the briefing', timeoutMs: undefined, ...options.recipe },
    context: { ...context, ...options.context },
  });
}

const SECRET = 'Bearer s3cr3t-T0ken/with+chars=';
const secretEnv = { URSA_SECRET_HOOK_TOKEN: SECRET };

describe('http engine: delivery (issue #5)', () => {
  it('POSTs the JSON document with content type, idempotency key, recipe headers and the secret header; 2xx is done', async () => {
    const server = await startServer(reply(202, 'accepted'));
    const engine = createHttpEngine({ env: secretEnv });
    const result = await engine.run(
      httpRequest(`${server.origin}/hooks/briefing?team=ops`, {
        recipe: {
          headers: { 'X-Team': 'ops', 'User-Agent': 'ursa-test' },
          secretHeaders: { Authorization: 'URSA_SECRET_HOOK_TOKEN' },
        },
        params: { topic: 'the day ahead', depth: 2 },
        initialMessage: 'Create the daily briefing.',
      }),
    );

    expect(result).toEqual({ status: 'done', output: 'accepted' });
    expect(server.received).toHaveLength(1);
    const [received] = server.received;
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/hooks/briefing?team=ops');
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers['x-team']).toBe('ops');
    expect(received?.headers['user-agent']).toBe('ursa-test');
    expect(received?.headers.authorization).toBe(SECRET);
    expect(received?.headers['idempotency-key']).toBe(idempotencyKey(context));
    expect(JSON.parse(received?.body ?? '')).toEqual({
      recipe: 'briefing',
      params: { topic: 'the day ahead', depth: 2 },
      initialMessage: 'Create the daily briefing.',
      trigger: {
        scheduler: 'nightly-report',
        correlationId: 'corr-0001',
        scheduledFor: '2026-03-28T12:00:00Z',
        tenant: 'acme',
        project: 'web',
        runAs: 'alice',
      },
    });
  });

  it('sends initialMessage null when the scheduler has none, and a 2xx without a body is done with empty output', async () => {
    const server = await startServer(reply(204, ''));
    const result = await createHttpEngine().run(httpRequest(`${server.origin}/`));
    expect(result).toEqual({ status: 'done', output: '' });
    expect(JSON.parse(server.received[0]?.body ?? '').initialMessage).toBeNull();
  });

  it('sends the same Idempotency-Key for every delivery of one occurrence and another for the next occurrence', async () => {
    const server = await startServer(reply(200, 'ok'));
    const engine = createHttpEngine();
    const url = `${server.origin}/hook`;
    // A repeat of the occurrence (another worker, another correlation id) and the next occurrence.
    await engine.run(httpRequest(url));
    await engine.run(httpRequest(url, { context: { correlationId: 'corr-0002' } }));
    await engine.run(httpRequest(url, { context: { scheduledFor: context.scheduledFor + 86_400_000 } }));
    const keys = server.received.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('derives the Idempotency-Key as sha256 of [tenant, project, scheduler, scheduledFor], first 32 hex digits', () => {
    expect(idempotencyKey(context)).toBe('7cc28e753e020a52711c9250952f2a03');
    const keys = new Set([
      idempotencyKey(context),
      idempotencyKey({ ...context, tenant: 'other' }),
      idempotencyKey({ ...context, project: 'other' }),
      idempotencyKey({ ...context, scheduler: 'other' }),
      idempotencyKey({ ...context, scheduledFor: context.scheduledFor + 1 }),
      // Parts are kept apart: moving a character from one name to the next is another occurrence.
      idempotencyKey({ ...context, tenant: 'acmew', project: 'eb' }),
    ]);
    expect(keys.size).toBe(6);
    // Only the occurrence counts: correlation id and runAs do not change the key.
    const redelivery = { ...context, correlationId: 'corr-0002', runAs: 'bob' };
    expect(idempotencyKey(redelivery)).toBe(idempotencyKey(context));
  });

  it('builds the payload with scheduledFor as ISO-8601 UTC', () => {
    expect(httpRunPayload(httpRequest('https://example.com/')).trigger.scheduledFor).toBe(
      '2026-03-28T12:00:00Z',
    );
  });

  it('defaults the timeout to 30 s when the recipe sets none', async () => {
    expect(HTTP_DEFAULT_TIMEOUT_MS).toBe(30_000);
    const server = await startServer(reply(200, 'ok'));
    const timeout = vi.spyOn(AbortSignal, 'timeout');
    try {
      await createHttpEngine().run(httpRequest(`${server.origin}/`));
      await createHttpEngine().run(httpRequest(`${server.origin}/`, { recipe: { timeoutMs: 5000 } }));
      expect(timeout.mock.calls).toEqual([[30_000], [5000]]);
    } finally {
      timeout.mockRestore();
    }
  });
});

describe('http engine: failures (issue #5)', () => {
  it('ends failed with `HTTP 500 <statusText>` and the body excerpt as output for a non-2xx answer', async () => {
    const server = await startServer(reply(500, 'database is down'));
    const result = await createHttpEngine().run(httpRequest(`${server.origin}/hook`));
    expect(result).toEqual({
      status: 'failed',
      reason: 'HTTP 500 Internal Server Error',
      output: 'database is down',
    });
  });

  it('does not follow a redirect, so no header goes to another address: 3xx is failed', async () => {
    const server = await startServer((request, response) => {
      if (request.url === '/moved') {
        response.writeHead(302, { Location: '/elsewhere' });
        response.end();
      } else {
        response.writeHead(200).end('should not be reached');
      }
    });
    const result = await createHttpEngine({ env: secretEnv }).run(
      httpRequest(`${server.origin}/moved`, {
        recipe: { secretHeaders: { Authorization: 'URSA_SECRET_HOOK_TOKEN' } },
      }),
    );
    expect(result).toEqual({ status: 'failed', reason: 'HTTP 302 Found', output: '' });
    expect(server.received.map((r) => r.url)).toEqual(['/moved']);
  });

  it('keeps only the first bodyExcerptBytes bytes of the body, never half a character', async () => {
    const server = await startServer(reply(400, `abcd€${'x'.repeat(100_000)}`));
    const engine = createHttpEngine({ bodyExcerptBytes: 6 });
    // `€` is 3 bytes (4-6): 6 bytes would cut it, so the excerpt stops before it.
    expect(await engine.run(httpRequest(`${server.origin}/`))).toEqual({
      status: 'failed',
      reason: 'HTTP 400 Bad Request',
      output: 'abcd',
    });
    const whole = await createHttpEngine({ bodyExcerptBytes: 7 }).run(httpRequest(`${server.origin}/`));
    expect(whole.output).toBe('abcd€');
    const none = await createHttpEngine({ bodyExcerptBytes: 0 }).run(httpRequest(`${server.origin}/`));
    expect(none.output).toBe('');
  });

  it('ends failed with `timeout after N ms` when the server does not answer within the recipe timeout', async () => {
    const server = await startServer(silent);
    const result = await createHttpEngine().run(
      httpRequest(`${server.origin}/slow`, { recipe: { timeoutMs: 200 } }),
    );
    expect(result).toEqual({ status: 'failed', reason: 'timeout after 200 ms' });
    expect(server.received).toHaveLength(1);
  });

  it('ends failed with `cannot reach <origin>: ECONNREFUSED`, naming the origin only (no path or query)', async () => {
    const server = await startServer(silent);
    const { origin } = server;
    await server.close();
    const result = await createHttpEngine().run(httpRequest(`${origin}/hook/t0ps3cret?token=abc`));
    expect(result).toEqual({ status: 'failed', reason: `cannot reach ${origin}: ECONNREFUSED` });
  });

  it('names the origin and the resolver code when the host name does not resolve', async () => {
    // A fetch that fails as undici does for an unknown host, so the test needs no DNS.
    const unresolved: typeof fetch = async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.invalid'), { code: 'ENOTFOUND' }),
      });
    };
    const result = await createHttpEngine({ fetch: unresolved }).run(
      httpRequest('https://hooks.example.invalid:8443/hook?token=abc'),
    );
    expect(result).toEqual({
      status: 'failed',
      reason: 'cannot reach https://hooks.example.invalid:8443: ENOTFOUND',
    });
  });

  it('sends nothing and ends failed naming the variable when a secret header variable is not set', async () => {
    const server = await startServer(reply(200, 'ok'));
    const engine = createHttpEngine({ env: { URSA_SECRET_EMPTY: '' } });
    const missing = await engine.run(
      httpRequest(`${server.origin}/`, {
        recipe: { secretHeaders: { Authorization: 'URSA_SECRET_HOOK_TOKEN' } },
      }),
    );
    expect(missing).toEqual({
      status: 'failed',
      reason: 'secret header "Authorization": environment variable URSA_SECRET_HOOK_TOKEN is not set',
    });
    const empty = await engine.run(
      httpRequest(`${server.origin}/`, { recipe: { secretHeaders: { 'X-Key': 'URSA_SECRET_EMPTY' } } }),
    );
    expect(empty.reason).toBe('secret header "X-Key": environment variable URSA_SECRET_EMPTY is not set');
    expect(server.received).toHaveLength(0);
  });

  it('never repeats a secret value that cannot be a header value', async () => {
    const server = await startServer(reply(200, 'ok'));
    const engine = createHttpEngine({ env: { URSA_SECRET_HOOK_TOKEN: 'line1\nline2' } });
    const result = await engine.run(
      httpRequest(`${server.origin}/`, {
        recipe: { secretHeaders: { Authorization: 'URSA_SECRET_HOOK_TOKEN' } },
      }),
    );
    expect(result).toEqual({
      status: 'failed',
      reason:
        'secret header "Authorization": environment variable URSA_SECRET_HOOK_TOKEN holds a character a header value cannot (a line break, NUL, another control character or one beyond Latin-1)',
    });
    expect(server.received).toHaveLength(0);
  });

  it('sends nothing for a recipe built without a usable url, a reserved header or params without JSON form', async () => {
    const engine = createHttpEngine();
    expect(await engine.run(httpRequest(undefined))).toEqual({
      status: 'failed',
      reason: 'recipe has no url',
    });
    expect(await engine.run(httpRequest('file:///etc/passwd'))).toEqual({
      status: 'failed',
      reason:
        'url has the scheme file:; only http:// and https:// URLs are allowed, e.g. https://hooks.example.com/briefing',
    });
    const withCredentials = await engine.run(httpRequest('https://bob:hunter2@example.com/'));
    expect(withCredentials.status).toBe('failed');
    expect(withCredentials.reason).not.toContain('hunter2');
    expect(
      await engine.run(
        httpRequest('https://example.com/', { recipe: { headers: { 'Idempotency-Key': 'x' } } }),
      ),
    ).toEqual({
      status: 'failed',
      reason:
        'header "Idempotency-Key": is set by the http engine or the connection and cannot be given in a recipe',
    });
    const bigint = await engine.run(httpRequest('https://example.com/', { params: { n: 10n } }));
    expect(bigint.status).toBe('failed');
    expect(bigint.reason).toMatch(/^params cannot be written as JSON: /);
  });

  it('refuses a bodyExcerptBytes that is not a non-negative integer with ARGUMENT_INVALID', () => {
    let error: unknown;
    try {
      createHttpEngine({ bodyExcerptBytes: -1 });
    } catch (caught) {
      error = caught;
    }
    expect(isUrsaError(error)).toBe(true);
    expect((error as UrsaError).code).toBe('ARGUMENT_INVALID');
    expect((error as UrsaError).field).toBe('bodyExcerptBytes');
  });
});

describe('http engine: secrets never reach the run log (issue #5, decisions §6)', () => {
  it('redacts a secret the server echoes in the body and in the status text', async () => {
    const server = await startServer((request, response) => {
      const auth = request.headers.authorization ?? '';
      response.writeHead(401, `denied ${auth}`, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: 'denied', youSent: auth, headers: request.headers }));
    });
    const result = await createHttpEngine({ env: secretEnv }).run(
      httpRequest(`${server.origin}/`, {
        recipe: { secretHeaders: { Authorization: 'URSA_SECRET_HOOK_TOKEN' } },
      }),
    );
    expect(server.received[0]?.headers.authorization).toBe(SECRET);
    expect(result.status).toBe('failed');
    expect(result.reason).toBe('HTTP 401 denied ***');
    expect(JSON.parse(result.output ?? '')).toMatchObject({ error: 'denied', youSent: '***' });
    expect(JSON.stringify(result)).not.toContain('s3cr3t');
  });

  it('redacts a secret that runs across the end of the excerpt instead of showing its first half', async () => {
    const server = await startServer((request, response) => {
      const key = String(request.headers['x-api-key']);
      // The excerpt's 14 bytes arrive first, the rest of the secret later: the engine reads on.
      response.writeHead(200);
      response.write(`0123456789${key.slice(0, 4)}`);
      setTimeout(() => response.end(`${key.slice(4)} and more`), 50);
    });
    const engine = createHttpEngine({ env: { URSA_SECRET_KEY: 'abcdefghij' }, bodyExcerptBytes: 14 });
    const result = await engine.run(
      httpRequest(`${server.origin}/`, { recipe: { secretHeaders: { 'X-Api-Key': 'URSA_SECRET_KEY' } } }),
    );
    expect(result).toEqual({ status: 'done', output: '0123456789***' });
  });
});

describe('http engine: stop (issue #5)', () => {
  it('ends stopped with the abort reason when the signal is aborted while waiting for the answer', async () => {
    const server = await startServer(silent);
    const controller = new AbortController();
    const arrived = server.nextRequest();
    const running = createHttpEngine().run(httpRequest(`${server.origin}/`, { signal: controller.signal }));
    await arrived;
    controller.abort('cancelPrevious');
    expect(await running).toEqual({ status: 'stopped', reason: 'cancelPrevious' });
  });

  it('ends stopped with reason `stopped` for an abort without a string reason', async () => {
    const server = await startServer(silent);
    const controller = new AbortController();
    const arrived = server.nextRequest();
    const running = createHttpEngine().run(httpRequest(`${server.origin}/`, { signal: controller.signal }));
    await arrived;
    controller.abort();
    expect(await running).toEqual({ status: 'stopped', reason: 'stopped' });
  });

  it('sends nothing when the signal is already aborted', async () => {
    const server = await startServer(reply(200, 'ok'));
    const controller = new AbortController();
    controller.abort('shutdown');
    const result = await createHttpEngine().run(
      httpRequest(`${server.origin}/`, { signal: controller.signal }),
    );
    expect(result).toEqual({ status: 'stopped', reason: 'shutdown' });
    expect(server.received).toHaveLength(0);
  });
});
