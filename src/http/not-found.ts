import { isUrsaError, UrsaError } from '../errors/index.js';

/**
 * The one answer for a resource the caller cannot see (decisions §6): a missing resource and one of
 * another tenant get the same problem body, word for word — the detail of `callerFor`'s
 * cross-tenant refusal and of the app's not-found handler.
 */
export const NO_SUCH_RESOURCE = 'no such resource';

/** `NOT_FOUND` with the uniform detail {@link NO_SUCH_RESOURCE} (no field, no name). */
export function notFound(): UrsaError {
  return new UrsaError('NOT_FOUND', NO_SUCH_RESOURCE);
}

/**
 * Runs `work` (a service call) and replaces any `NOT_FOUND` it throws by {@link notFound}, so a
 * service's detailed message ("scheduler x does not exist in acme/ops") never makes a missing
 * resource distinguishable from another tenant's.
 */
export async function hidingNotFound<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUrsaError(error, 'NOT_FOUND')) throw notFound();
    throw error;
  }
}
