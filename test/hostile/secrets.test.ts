import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpEngine } from '../../src/engines/http.js';
import type { UrsaError } from '../../src/errors/index.js';
import { parseRecipeDocument } from '../../src/recipes/parse.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { thrown } from '../support/cron.js';
import { DIALECTS } from '../support/dialects.js';
import { type Handler, startHookServer } from '../support/hook-server.js';
import { httpEngineRequest, httpRecipe, runHttpRecipeOnce } from '../support/http-run.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// Issue #19: a secret header's value never reaches what is stored or shown, in whatever form a
// server echoes it back, and a secret bound to hosts (operator setting secretHosts) is never sent
// elsewhere: refused when the recipe is written, and again when the request is sent.

/** The credential: `/`, `+`, `=`, `"`, `~` and `!` make every encoding of it differ from it. */
const CREDENTIAL = 's3cr3t/T0k"en+with=chars~42!';
const VALUE = `Bearer ${CREDENTIAL}`;
const ENV = { URSA_SECRET_HOOK: VALUE };
const SECRET_HEADER = { Authorization: 'URSA_SECRET_HOOK' };

/** A run of a recipe that sends `URSA_SECRET_HOOK` as `Authorization` to `url`. */
const request = (url: string) => httpEngineRequest(url, { recipe: { secretHeaders: SECRET_HEADER } });

const json = (text: string) => JSON.stringify(text).slice(1, -1);

/** The forms a careless webhook echoes a token in, each written here from its own definition. */
const ECHOES: Readonly<Record<string, string>> = {
  bare: CREDENTIAL,
  whole: VALUE,
  upperCase: CREDENTIAL.toUpperCase(),
  lowerCaseWhole: VALUE.toLowerCase(),
  mixedCase: [...CREDENTIAL].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join(''),
  uriComponent: encodeURIComponent(CREDENTIAL),
  uriComponentWhole: encodeURIComponent(VALUE),
  uriComponentUpperCase: encodeURIComponent(CREDENTIAL).toLowerCase(),
  formEncoded: new URLSearchParams({ t: CREDENTIAL }).toString().slice('t='.length),
  formEncodedWhole: new URLSearchParams({ t: VALUE }).toString().slice('t='.length),
  base64: Buffer.from(CREDENTIAL).toString('base64'),
  base64Unpadded: Buffer.from(CREDENTIAL).toString('base64').replace(/=+$/, ''),
  base64url: Buffer.from(CREDENTIAL).toString('base64url'),
  base64Whole: Buffer.from(VALUE).toString('base64'),
  jsonEscaped: json(CREDENTIAL),
  jsonEscapedSlashes: json(CREDENTIAL).replace(/\//g, '\\/'),
  jsonEscapedWhole: json(VALUE),
  // Per-character encodings, which an echo may also mix (found by a hostile review).
  hex: Buffer.from(CREDENTIAL).toString('hex'),
  hexUpperCase: Buffer.from(CREDENTIAL).toString('hex').toUpperCase(),
  quotedPrintable: CREDENTIAL.replace(/[=+/~!"]/g, (c) => `=${c.charCodeAt(0).toString(16).toUpperCase()}`),
  htmlEntities: CREDENTIAL.replace(/[/"+=~!]/g, (c) => `&#x${c.charCodeAt(0).toString(16)};`),
  htmlDecimalEntities: [...CREDENTIAL].map((c) => `&#${c.charCodeAt(0)};`).join(''),
  jsonEveryCharEscaped: [...CREDENTIAL]
    .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join(''),
  doubleUriComponent: encodeURIComponent(encodeURIComponent(CREDENTIAL)),
  mixedEncodings: [...CREDENTIAL]
    .map((c, i) => [c, encodeURIComponent(c), `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`][i % 3])
    .join(''),
};

/** Every echo, lower case: no stored or shown text may hold any of them in any letter case. */
const LEAKS = Object.values(ECHOES).map((form) => form.toLowerCase());

function leaked(text: string): string[] {
  const lower = text.toLowerCase();
  return LEAKS.filter((form) => lower.includes(form));
}

/** Answers 200 with `body(authorization)`. */
function echo(body: (authorization: string) => string): Handler {
  return (received, response) => {
    response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    response.end(body(String(received.headers.authorization)));
  };
}

describe('redaction covers every form a server echoes a secret in (issue #19)', () => {
  it.each(Object.entries(ECHOES))('replaces the secret echoed %s by ***', async (_name, form) => {
    const server = await startHookServer(echo(() => `echo <${form}> end`));
    const result = await createHttpEngine({ env: ENV }).run(request(`${server.origin}/hook`));
    expect(server.received[0]?.headers.authorization).toBe(VALUE);
    expect(result).toEqual({ status: 'done', output: 'echo <***> end' });
  });

  it('replaces the credential echoed in the status text of a refusal', async () => {
    const server = await startHookServer((received, response: ServerResponse) => {
      const credential = String(received.headers.authorization).slice('Bearer '.length);
      response.writeHead(401, `token ${credential.toUpperCase()} is unknown`);
      response.end(`unknown: ${encodeURIComponent(credential)}`);
    });
    const result = await createHttpEngine({ env: ENV }).run(request(`${server.origin}/hook`));
    expect(result).toEqual({
      status: 'failed',
      reason: 'HTTP 401 token *** is unknown',
      output: 'unknown: ***',
    });
  });

  it.each([
    ['bare', CREDENTIAL],
    ['URL-encoded', encodeURIComponent(CREDENTIAL)],
    ['base64', Buffer.from(CREDENTIAL).toString('base64')],
  ])('replaces a secret echoed %s across two chunks of a streamed answer', async (_name, form) => {
    const server = await startHookServer((_received, response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.write(`start ${form.slice(0, 7)}`);
      setTimeout(() => response.end(`${form.slice(7)} end`), 20);
    });
    const result = await createHttpEngine({ env: ENV }).run(request(`${server.origin}/hook`));
    expect(result).toEqual({ status: 'done', output: 'start *** end' });
  });

  it.each([0, 1, 2])(
    'leaves at most two bytes at each end of the credential in a base64 text that holds it at offset %i of a group',
    async (pad) => {
      const document = `{"pad":"${'x'.repeat(pad)}","token":"${CREDENTIAL.replace(/"/g, '\\"')}"}`;
      const encoded = Buffer.from(document).toString('base64');
      const server = await startHookServer(echo(() => encoded));
      const { output = '' } = await createHttpEngine({ env: ENV }).run(request(`${server.origin}/hook`));
      // The characters before *** decode to bytes ending at most 2 bytes into the credential, those
      // after it to bytes starting at most 2 bytes before its end.
      const at = document.indexOf(json(CREDENTIAL));
      const end = at + json(CREDENTIAL).length;
      const before = output.indexOf('***');
      const after = encoded.length - (output.length - before - 3);
      expect(output.match(/\*\*\*/g)).toHaveLength(1);
      expect(output.slice(0, before)).toBe(encoded.slice(0, before));
      expect(output.slice(before + 3)).toBe(encoded.slice(after));
      expect(Math.floor((before * 3) / 4)).toBeLessThanOrEqual(at + 2);
      expect(Math.ceil((after * 3) / 4)).toBeGreaterThanOrEqual(end - 2);
    },
  );

  it('replaces the user:password and the password of a Basic credential, and their encodings', async () => {
    const userPass = 'ada:pa55-W0rd/zeta';
    const env = { URSA_SECRET_HOOK: `Basic ${Buffer.from(userPass).toString('base64')}` };
    const server = await startHookServer(
      echo(() =>
        [userPass, 'pa55-W0rd/zeta', encodeURIComponent('pa55-W0rd/zeta'), 'PA55-W0RD/ZETA'].join(' | '),
      ),
    );
    const result = await createHttpEngine({ env }).run(request(`${server.origin}/hook`));
    expect(result).toEqual({ status: 'done', output: '*** | *** | *** | ***' });
  });

  it('redacts a whole value shorter than 6 characters only as it is, and derived forms from 6 characters on', async () => {
    const server = await startHookServer(echo(() => 'x4Yz and X4YZ; Q7wE9r and q7we9R'));
    const short = await createHttpEngine({ env: { URSA_SECRET_HOOK: 'x4Yz' } }).run(
      request(`${server.origin}/`),
    );
    expect(short.output).toBe('*** and X4YZ; Q7wE9r and q7we9R');
    const six = await createHttpEngine({ env: { URSA_SECRET_HOOK: 'Token Q7wE9r' } }).run(
      request(`${server.origin}/`),
    );
    expect(six.output).toBe('x4Yz and X4YZ; *** and ***');
  });
});

describe('no form of a secret reaches the run log, outputTail, feed or API, on each store (issue #19)', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.each(DIALECTS)('%s: a hook that echoes every form, in the body and the status text', async (dialect) => {
    const server = await startHookServer((received, response) => {
      const credential = String(received.headers.authorization).slice('Bearer '.length);
      response.writeHead(403, `no ${credential}`, { 'Content-Type': 'text/plain; charset=utf-8' });
      // `: ` between label and echo: a `=` or `%` there could be read as part of an encoding
      // (`=73` is quoted-printable for `s`) and redacted with it, which is safe but not exact.
      response.write(
        Object.entries(ECHOES)
          .map(([name, form]) => `${name}: ${form}\n`)
          .join('')
          .slice(0, 50),
      );
      setTimeout(
        () =>
          response.end(
            Object.entries(ECHOES)
              .map(([name, form]) => `${name}: ${form}\n`)
              .join('')
              .slice(50),
          ),
        20,
      );
    });
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect, http: { env: ENV } });
    const trace = await runHttpRecipeOnce(t, httpRecipe(`${server.origin}/hook`, SECRET_HEADER));
    expect(server.received.map((r) => r.headers.authorization)).toEqual([VALUE]);
    expect([trace.run.outcome, trace.run.reason]).toEqual(['failed', 'HTTP 403 no ***']);
    expect(trace.process?.outputTail).toBe(
      Object.keys(ECHOES)
        .map((name) => `${name}: ***\n`)
        .join(''),
    );
    expect(trace.log).toContain('HTTP 403 no ***');
    expect(trace.log).toContain('bare: ***');
    expect(trace.api).toContain('HTTP 403 no ***');
    expect({
      log: leaked(trace.log),
      outputTail: leaked(trace.process?.outputTail ?? ''),
      reason: leaked(trace.run.reason ?? ''),
      feed: leaked(trace.feed),
      api: leaked(trace.api),
    }).toEqual({ log: [], outputTail: [], reason: [], feed: [], api: [] });
  });
});

describe('a secret bound to hosts is refused for another host when written (issue #19)', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const secretHosts = { URSA_SECRET_HOOK: ['hooks.example.com', '*.example.org'] };
  const parse = (url: string) =>
    parseRecipeDocument(httpRecipe(url, SECRET_HEADER), {
      name: 'hook',
      path: '_vance/recipes/hook.yaml',
      source: 'project',
      secretHosts,
    });

  it('accepts the hosts the binding names, in any letter case and with a trailing dot', () => {
    for (const url of [
      'https://hooks.example.com/x',
      'https://HOOKS.Example.COM./x',
      'https://api.example.org/x',
      'https://a.b.example.org:8443/x',
    ]) {
      expect(parse(url).url, url).toBe(url);
    }
  });

  it.each([
    ['https://example.org/x', 'example.org'],
    ['https://evil-example.org/x', 'evil-example.org'],
    ['https://hooks.example.com.evil.net/x', 'hooks.example.com.evil.net'],
    ['http://127.0.0.1:8080/x', '127.0.0.1'],
    ['http://[::1]/x', '::1'],
  ])('refuses %s at secretHeaders.Authorization, naming the variable and the hosts', (url, host) => {
    const error = thrown(() => parse(url)) as UrsaError;
    const message = `URSA_SECRET_HOOK may be sent only to hooks.example.com, *.example.org (secretHosts), not to ${host}`;
    expect([error.code, error.field, error.issues]).toEqual([
      'RECIPE_INVALID',
      'secretHeaders.Authorization',
      [{ path: 'secretHeaders.Authorization', message }],
    ]);
  });

  it.each(DIALECTS)('%s: ursa apply reports the recipe invalid and stores nothing', async (dialect) => {
    const server = await startHookServer(echo(() => 'ok'));
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect, http: { env: ENV, secretHosts } });
    const entries = await applyDirectory(
      t.rt,
      projectFolder({ '_vance/recipes/hook.yaml': httpRecipe(`${server.origin}/hook`, SECRET_HEADER) }),
      'acme',
      'ops',
      libraryActor('ada'),
    );
    const message =
      'URSA_SECRET_HOOK may be sent only to hooks.example.com, *.example.org (secretHosts), not to 127.0.0.1';
    expect(entries).toEqual([
      {
        path: '_vance/recipes/hook.yaml',
        status: 'invalid',
        message: `_vance/recipes/hook.yaml: secretHeaders.Authorization: ${message}`,
        issues: [{ path: 'secretHeaders.Authorization', message }],
      },
    ]);
    expect(await t.rt.repos.documents.list('acme', 'ops', '')).toEqual([]);
    expect(server.connections()).toBe(0);
  });
});

describe('a secret bound to hosts is checked again when the request is sent (issue #19)', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('sends nothing to a URL whose host the binding does not name, and sends to one it names', async () => {
    const server = await startHookServer(echo(() => 'ok'));
    const engine = createHttpEngine({ env: ENV, secretHosts: { URSA_SECRET_HOOK: ['localhost'] } });
    expect(await engine.run(request(`${server.origin}/hook`))).toEqual({
      status: 'failed',
      reason:
        'secret header "Authorization": URSA_SECRET_HOOK may be sent only to localhost (secretHosts), not to 127.0.0.1',
    });
    expect(server.connections()).toBe(0);
    const bound = createHttpEngine({ env: ENV, secretHosts: { URSA_SECRET_HOOK: ['127.0.0.1'] } });
    expect(await bound.run(request(`${server.origin}/hook`))).toEqual({ status: 'done', output: 'ok' });
    expect(server.received.map((r) => r.headers.authorization)).toEqual([VALUE]);
  });

  it.each(DIALECTS)(
    '%s: a recipe written before the binding fails its run, and the server never receives the secret',
    async (dialect) => {
      const server = await startHookServer(echo(() => 'ok'));
      // The store took the recipe when no binding was in force; the worker now has one.
      t = await testRuntime('2026-06-01T08:00:00Z', {
        dialect,
        http: { env: ENV, secretHosts: { URSA_SECRET_HOOK: ['hooks.example.com'] } },
        settings: { secretHosts: {} },
      });
      const trace = await runHttpRecipeOnce(t, httpRecipe(`${server.origin}/hook`, SECRET_HEADER));
      const reason =
        'secret header "Authorization": URSA_SECRET_HOOK may be sent only to hooks.example.com (secretHosts), not to 127.0.0.1';
      expect([trace.run.outcome, trace.run.reason]).toEqual(['failed', reason]);
      expect(trace.log).toContain(reason);
      expect(server.connections()).toBe(0);
      expect(server.received).toEqual([]);
    },
  );
});
