import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import { parseRecipeDocument, validateRecipeDocument } from '../../src/recipes/parse.js';
import { thrown } from '../support/cron.js';

const PATH = '_vance/recipes/briefing.yaml';
const options = { name: 'briefing', path: PATH, source: 'project' } as const;

function refusal(text: string): UrsaError {
  return thrown(() => parseRecipeDocument(text, options)) as UrsaError;
}

/** The issues of an `http` recipe whose other lines are `lines`. */
function httpIssues(lines: string): unknown {
  return refusal(`description: d\nengine: http\n${lines}`).issues;
}

const URL_EXPECTED = 'https://hooks.example.com/briefing';

// Issue #5: recipe fields of the `http` engine — url, headers, secretHeaders, timeout.
describe('http recipes (issue #5)', () => {
  it('reads an http recipe with url, headers, secret header variable names and timeout', () => {
    expect(
      parseRecipeDocument(
        `description: Posts the briefing.
engine: http
url: https://hooks.example.com/briefing?channel=ops
headers:
  X-Team: ops
  Accept: application/json
secretHeaders:
  Authorization: URSA_SECRET_BRIEFING_TOKEN
params:
  topic: status
timeout: PT10S
`,
        options,
      ),
    ).toEqual({
      name: 'briefing',
      description: 'Posts the briefing.',
      engine: 'http',
      params: { topic: 'status' },
      command: undefined,
      url: 'https://hooks.example.com/briefing?channel=ops',
      headers: { 'X-Team': 'ops', Accept: 'application/json' },
      secretHeaders: { Authorization: 'URSA_SECRET_BRIEFING_TOKEN' },
      timeoutMs: 10_000,
      source: 'project',
    });
  });

  it('leaves headers, secretHeaders and timeout unset when absent (the engine then waits 30 s)', () => {
    const recipe = parseRecipeDocument(
      'description: d\nengine: http\nurl: http://127.0.0.1:8080/hook\n',
      options,
    );
    expect(recipe.url).toBe('http://127.0.0.1:8080/hook');
    expect(recipe.headers).toBeUndefined();
    expect(recipe.secretHeaders).toBeUndefined();
    expect(recipe.timeoutMs).toBeUndefined();
  });

  it('requires url for the http engine', () => {
    const error = refusal('description: d\nengine: http\n');
    expect(error.code).toBe('RECIPE_INVALID');
    expect(error.field).toBe('url');
    expect(error.message).toBe(
      `${PATH}: url: is required when engine is http: the absolute http:// or https:// URL to POST to, e.g. ${URL_EXPECTED}`,
    );
  });

  it('refuses a url whose scheme is not http or https (file:, ftp:, javascript:)', () => {
    for (const url of ['file:///etc/passwd', 'ftp://ftp.example.com/x', 'javascript:alert(1)']) {
      const scheme = `${url.split(':')[0]}:`;
      expect(httpIssues(`url: "${url}"\n`)).toEqual([
        {
          path: 'url',
          message: `has the scheme ${scheme}; only http:// and https:// URLs are allowed, e.g. ${URL_EXPECTED}`,
        },
      ]);
    }
  });

  it('refuses a relative url', () => {
    for (const url of ['/hooks/briefing', 'hooks.example.com/briefing', '']) {
      expect(httpIssues(`url: "${url}"\n`)).toEqual([
        {
          path: 'url',
          message: `is not an absolute URL; expected an absolute http:// or https:// URL, e.g. ${URL_EXPECTED}`,
        },
      ]);
    }
  });

  it('refuses credentials in the url without repeating them', () => {
    for (const url of ['https://bob:hunter2@hooks.example.com/x', 'https://bob@hooks.example.com/x']) {
      const error = refusal(`description: d\nengine: http\nurl: "${url}"\n`);
      expect(error.issues).toEqual([
        {
          path: 'url',
          message:
            'must not hold credentials (user:password@); send them in a header from secretHeaders instead, e.g. Authorization: URSA_SECRET_HOOK_TOKEN',
        },
      ]);
      expect(error.message).not.toContain('hunter2');
    }
  });

  it('refuses command for the http engine', () => {
    expect(httpIssues('url: https://hooks.example.com/x\ncommand: [curl, -d, x]\n')).toEqual([
      { path: 'command', message: 'is only for the shell engine; engine "http" takes none' },
    ]);
  });

  it('refuses url, headers and secretHeaders for the shell and noop engines, with their field paths', () => {
    expect(
      refusal(`description: d
engine: shell
command: [backup]
url: https://hooks.example.com/x
headers: {X-Team: ops}
secretHeaders: {Authorization: URSA_SECRET_T}
`).issues,
    ).toEqual([
      { path: 'url', message: 'is only for the http and agent engines; engine "shell" takes none' },
      { path: 'headers', message: 'is only for the http and agent engines; engine "shell" takes none' },
      { path: 'secretHeaders', message: 'is only for the http and agent engines; engine "shell" takes none' },
    ]);
    expect(refusal('description: d\nengine: noop\nurl: https://hooks.example.com/x\n').issues).toEqual([
      { path: 'url', message: 'is only for the http and agent engines; engine "noop" takes none' },
    ]);
  });

  it('lets an engine registered by a library user take url and headers, as it may take command', () => {
    const recipe = parseRecipeDocument(
      'description: d\nengine: webhook\nurl: https://hooks.example.com/x\nheaders: {X-A: b}\n',
      options,
    );
    expect(recipe.url).toBe('https://hooks.example.com/x');
    expect(recipe.headers).toEqual({ 'X-A': 'b' });
  });

  it('refuses header names that are not RFC 7230 tokens and values that are not single-line strings', () => {
    expect(
      httpIssues(`url: https://hooks.example.com/x
headers:
  "X Team": ops
  "X-Ok": ok
  "X-Ünï": x
  X-Count: 3
  X-Split: "a\\r\\nInjected: yes"
  X-Emoji: "ok 🙂"
  X-Latin: "café"
`),
    ).toEqual([
      {
        path: 'headers["X Team"]',
        message:
          "is not a valid header name: a header name is one or more of the letters, digits and !#$%&'*+-.^_`|~ (RFC 7230 token)",
      },
      {
        path: 'headers["X-Ünï"]',
        message:
          "is not a valid header name: a header name is one or more of the letters, digits and !#$%&'*+-.^_`|~ (RFC 7230 token)",
      },
      { path: 'headers.X-Count', message: 'expected a string, found the number 3' },
      {
        path: 'headers.X-Split',
        message:
          'a header value may hold only tab, space and printable Latin-1 characters: no line break, NUL or other control character',
      },
      {
        path: 'headers.X-Emoji',
        message:
          'a header value may hold only tab, space and printable Latin-1 characters: no line break, NUL or other control character',
      },
    ]);
  });

  it('refuses headers the engine or the connection sets, and a header given twice', () => {
    expect(
      httpIssues(`url: https://hooks.example.com/x
headers:
  content-type: text/plain
  Idempotency-Key: mine
  Host: evil.example.com
  X-Team: a
  x-team: b
secretHeaders:
  X-TEAM: URSA_SECRET_T
`),
    ).toEqual([
      {
        path: 'headers.content-type',
        message: 'is set by the http engine or the connection and cannot be given in a recipe',
      },
      {
        path: 'headers.Idempotency-Key',
        message: 'is set by the http engine or the connection and cannot be given in a recipe',
      },
      {
        path: 'headers.Host',
        message: 'is set by the http engine or the connection and cannot be given in a recipe',
      },
      {
        path: 'headers.x-team',
        message: 'is also given as "X-Team"; header names are case-insensitive, give each once',
      },
      {
        path: 'secretHeaders.X-TEAM',
        message: 'is also in headers (as "X-Team"); give each header once',
      },
    ]);
  });

  it('refuses a secret header that does not name a URSA_SECRET_ variable (never a literal, never another secret of the worker)', () => {
    expect(
      httpIssues(`url: https://hooks.example.com/x
secretHeaders:
  Authorization: Bearer abc123
  X-Key: url_secret
  X-Other: 1TOKEN
  X-Db: PGPASSWORD
  X-Fine: URSA_SECRET_2
`),
    ).toEqual([
      {
        path: 'secretHeaders.Authorization',
        message:
          'the string "Bearer abc123" is not the name of a secret variable: expected URSA_SECRET_ followed by upper-case letters, digits and _, e.g. URSA_SECRET_HOOK_TOKEN',
      },
      {
        path: 'secretHeaders.X-Key',
        message:
          'the string "url_secret" is not the name of a secret variable: expected URSA_SECRET_ followed by upper-case letters, digits and _, e.g. URSA_SECRET_HOOK_TOKEN',
      },
      {
        path: 'secretHeaders.X-Other',
        message:
          'the string "1TOKEN" is not the name of a secret variable: expected URSA_SECRET_ followed by upper-case letters, digits and _, e.g. URSA_SECRET_HOOK_TOKEN',
      },
      {
        path: 'secretHeaders.X-Db',
        message:
          'the string "PGPASSWORD" is not the name of a secret variable: expected URSA_SECRET_ followed by upper-case letters, digits and _, e.g. URSA_SECRET_HOOK_TOKEN',
      },
    ]);
  });

  it('refuses headers and secretHeaders that are not mappings', () => {
    expect(httpIssues('url: https://hooks.example.com/x\nheaders: [a]\nsecretHeaders: TOKEN\n')).toEqual([
      { path: 'headers', message: 'expected a mapping, found a list' },
      { path: 'secretHeaders', message: 'expected a mapping, found the string "TOKEN"' },
    ]);
  });

  it('collects the url issue with every other issue of the document', () => {
    const result = validateRecipeDocument(
      'description: d\nengine: http\nurl: ftp://x/\ntimeout: P1M\nretries: 2\n',
      options,
    );
    expect(result.ok ? [] : result.issues.map((i) => i.path)).toEqual(['url', 'timeout', 'retries']);
  });
});
