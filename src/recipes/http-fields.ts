import { z } from 'zod';
import { SECRET_ENV_NAME } from '../net/secret-hosts.js';
import { describeValue } from '../yaml/issues.js';

/**
 * The rules of the `http` engine's recipe fields (issue #5): `url`, `headers`, `secretHeaders`.
 * The recipe schema checks them when a document is read; the engine checks them again at run time,
 * because a library user may build a `RecipeDefinition` by hand. Every `…Problem` function returns
 * the reason a value is refused, or `undefined` when it is fine. No reason ever repeats a header
 * value, a secret or the password of a URL.
 */

/** A header name: an RFC 7230 `token` (`!#$%&'*+-.^_` and backquote, `|~`, digits, letters). */
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/u;

/** An example URL, for messages. */
const URL_EXAMPLE = 'https://hooks.example.com/briefing';

/**
 * Header names a recipe may not set (compared case-insensitively): `content-type`,
 * `idempotency-key` and `ursa-fencing-token` are set by the `http` engine; the others belong to the
 * connection, which the HTTP client manages (and mostly refuses to take from a caller).
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'idempotency-key',
  'ursa-fencing-token',
  'connection',
  'content-length',
  'expect',
  'host',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Why `text` cannot be the URL of an `http` recipe: not an absolute URL, a scheme other than
 * `http:`/`https:` (a `file:` or `ftp:` URL is never fetched), or credentials (`user:password@`)
 * in it — credentials belong in `secretHeaders`. The message never repeats the URL, which may hold
 * credentials or a token.
 */
export function httpUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `is not an absolute URL; expected an absolute http:// or https:// URL, e.g. ${URL_EXAMPLE}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `has the scheme ${url.protocol}; only http:// and https:// URLs are allowed, e.g. ${URL_EXAMPLE}`;
  }
  if (url.username !== '' || url.password !== '') {
    return 'must not hold credentials (user:password@); send them in a header from secretHeaders instead, e.g. Authorization: URSA_SECRET_HOOK_TOKEN';
  }
  return undefined;
}

/** Why `name` cannot be a header name of a recipe: not an RFC 7230 token, or reserved. */
export function headerNameProblem(name: string): string | undefined {
  if (!HEADER_TOKEN.test(name)) {
    return `is not a valid header name: a header name is one or more of the letters, digits and !#$%&'*+-.^_\`|~ (RFC 7230 token)`;
  }
  if (RESERVED_HEADERS.has(name.toLowerCase())) {
    return 'is set by the http engine or the connection and cannot be given in a recipe';
  }
  return undefined;
}

/** What a header value may hold (RFC 7230 `field-value` as Latin-1 text): tab, space, printable. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/u;

/**
 * Why `value` cannot be a header value: a line break, NUL or other control character, or a
 * character beyond Latin-1 (U+00FF). The value is never repeated.
 */
export function headerValueProblem(value: string): string | undefined {
  return HEADER_VALUE.test(value)
    ? undefined
    : 'a header value may hold only tab, space and printable Latin-1 characters: no line break, NUL or other control character';
}

/** Why `name` cannot name the environment variable of a secret header. */
export function secretEnvNameProblem(name: string): string | undefined {
  return SECRET_ENV_NAME.test(name)
    ? undefined
    : `${describeValue(name)} is not the name of a secret variable: expected URSA_SECRET_ followed by upper-case letters, digits and _, e.g. URSA_SECRET_HOOK_TOKEN`;
}

/** `url:` of an `http` recipe: see {@link httpUrlProblem}. */
export const httpUrlField = z.string().superRefine((text, ctx) => {
  const problem = httpUrlProblem(text);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/**
 * A mapping of header name → string whose names pass {@link headerNameProblem}, appear once
 * (case-insensitively) and whose values pass `valueProblem`. Every bad entry is its own issue at
 * `<field>.<name>`.
 */
function headerMap(valueProblem: (value: string) => string | undefined) {
  return z.record(z.string(), z.unknown()).transform((map, ctx) => {
    const seen = new Map<string, string>();
    const result: Record<string, string> = {};
    for (const [name, value] of Object.entries(map)) {
      const lower = name.toLowerCase();
      const earlier = seen.get(lower);
      const problem =
        headerNameProblem(name) ??
        (earlier === undefined
          ? undefined
          : `is also given as ${JSON.stringify(earlier)}; header names are case-insensitive, give each once`) ??
        (typeof value === 'string'
          ? valueProblem(value)
          : `expected a string, found ${describeValue(value)}`);
      seen.set(lower, earlier ?? name);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', path: [name], message: problem });
        continue;
      }
      // defineProperty: a `__proto__` key (a valid token) stays a plain entry, never the prototype.
      Object.defineProperty(result, name, { value, enumerable: true, writable: true, configurable: true });
    }
    return Object.freeze(result);
  });
}

/** `headers:` of an `http` recipe: header name → literal value, sent as is. */
export const headersField = headerMap(headerValueProblem);

/**
 * `secretHeaders:` of an `http` recipe: header name → the NAME of the environment variable whose
 * value the engine sends, read at run time; the value is never in the recipe or a log.
 */
export const secretHeadersField = headerMap(secretEnvNameProblem);
