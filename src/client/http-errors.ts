/**
 * What the remote client makes of a request that failed (src/client/http.ts): a server's
 * `application/problem+json` answer back into the {@link UrsaError} it stands for, and a request
 * that got no answer into words.
 */
import {
  type ErrorCode,
  errorCatalogue,
  errorOfCode,
  type UrsaError,
  type UrsaErrorDetails,
} from '../errors/index.js';

const isCode = (code: unknown): code is ErrorCode =>
  typeof code === 'string' && Object.hasOwn(errorCatalogue, code);

/** The code a status stands for when the answer is not one of Ursa's problem documents. */
function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'FORBIDDEN';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'CONFLICT';
    case 502:
    case 503:
    case 504:
      return 'STORE_UNAVAILABLE';
    default:
      return status >= 400 && status < 500 ? 'ARGUMENT_INVALID' : 'INTERNAL';
  }
}

/**
 * The {@link UrsaError} an `application/problem+json` answer (RFC 9457, `src/http/problem.ts`)
 * stands for: its `code` and `detail` become the code and message; a single `errors` entry that
 * repeats the detail is the error's `field`, several are its `issues`; an `allowed` member, when
 * the server sends one, is kept. So the CLI prints the line it prints for the same error raised
 * locally. An answer that is not such a document becomes an error naming the server and status.
 */
export function problemToError(status: number, body: unknown, server: string): UrsaError {
  const problem = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const { code, detail } = problem;
  if (!isCode(code) || typeof detail !== 'string') {
    return errorOfCode(codeOfStatus(status), `the server at ${server} answered HTTP ${status}`);
  }
  const errors = Array.isArray(problem.errors)
    ? problem.errors.filter(
        (e): e is { path: string; message: string } =>
          typeof e === 'object' &&
          e !== null &&
          typeof (e as { path?: unknown }).path === 'string' &&
          typeof (e as { message?: unknown }).message === 'string',
      )
    : [];
  const [first] = errors;
  const single = errors.length === 1 && first !== undefined && first.message === detail;
  const details: UrsaErrorDetails = {
    ...(single ? { field: first.path } : {}),
    ...(!single && errors.length > 0
      ? { issues: errors.map((e) => ({ path: e.path, message: e.message })) }
      : {}),
    ...(typeof problem.allowed === 'string' ? { allowed: problem.allowed } : {}),
  };
  return errorOfCode(code, detail, details);
}

/** Why a request did not get an answer, in words: `connection refused`, `timed out after 30 s`. */
export function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown }) : undefined;
  if (typeof cause?.code === 'string') {
    const known: Record<string, string> = {
      ECONNREFUSED: 'connection refused',
      ENOTFOUND: 'host not found',
      ECONNRESET: 'connection reset',
      ETIMEDOUT: 'connection timed out',
      EHOSTUNREACH: 'host unreachable',
    };
    return known[cause.code] ?? cause.code;
  }
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
