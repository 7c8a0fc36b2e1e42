import { InfrastructureError, UrsaError } from '../errors/index.js';

/** True when a driver error is a unique-constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

// SQLSTATE classes and codes of a server that cannot serve: connection exceptions (08), too many
// connections, disk full, out of memory and other insufficient resources (53), and a server that
// is shutting down, crashed or still starting (57P01-57P03).
const UNAVAILABLE_SQLSTATE = /^(?:08|53)[0-9A-Z]{3}$|^57P0[1-3]$/;
// What the operating system says of a connection that cannot be made or was lost.
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// The pg client's own errors for a lost connection carry no code, only these messages.
const PG_CONNECTION_LOST =
  /^(?:Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout)/;
// SQLite: the file cannot be opened, read or written, or is not a database (any more).
const SQLITE_UNAVAILABLE = /^SQLITE_(?:CANTOPEN|IOERR|NOTADB)/;

/**
 * True when a driver error means the store cannot be reached or cannot serve now (PostgreSQL
 * down, unreachable, restarting, out of connections; a SQLite file that cannot be read), rather
 * than a fault of the statement: such an error is answered `STORE_UNAVAILABLE` (503), never as bad
 * input or `INTERNAL`. An `AggregateError` (a connection tried on several addresses) counts when
 * each of its errors does.
 */
export function isStoreUnreachable(error: unknown): boolean {
  if (error instanceof AggregateError && error.errors.length > 0 && error.errors.every(isStoreUnreachable))
    return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code) || SQLITE_UNAVAILABLE.test(code))
      return true;
    return false;
  }
  return PG_CONNECTION_LOST.test(error.message);
}

/**
 * A driver error as Ursa's `STORE_UNAVAILABLE` when {@link isStoreUnreachable}, else the error
 * itself. The message names neither the store's location nor the driver's text (they reach REST
 * callers and agents); the driver's error is the `cause`, for the server log.
 */
export function translateStoreError(error: unknown): unknown {
  if (error instanceof UrsaError || !isStoreUnreachable(error)) return error;
  return new InfrastructureError('STORE_UNAVAILABLE', 'the store cannot be reached; try again later', {
    cause: error,
  });
}

/**
 * The text a SQLite write is aborted with when its process no longer serves the store (the
 * trigger of `StoreOwner.take`, store/owner.ts); the connection turns it into `STORE_LOCKED`.
 */
export const NOT_SERVING = 'ursa: this process no longer serves the store';

/** `STORE_UNAVAILABLE` naming the store; `cause` (the driver's error) is for the server log only. */
export function storeUnavailable(location: string, reason: string, cause?: unknown): InfrastructureError {
  return new InfrastructureError('STORE_UNAVAILABLE', `store: ${location}: ${reason}`, {
    field: 'db',
    value: location,
    cause: cause instanceof UrsaError ? (cause.cause ?? cause) : cause,
  });
}
