import type { FastifyRequest } from 'fastify';
import { UrsaError } from '../errors/index.js';
import type { Caller } from '../service/caller.js';
import type { Role, TokenRecord } from '../store/tokens.js';

const RANK: Record<Role, number> = { read: 0, write: 1, admin: 2 };

declare module 'fastify' {
  interface FastifyRequest {
    /** The token the request authenticated with (decisions §6); set by the auth hook. */
    token?: TokenRecord;
    /** Why the auth hook could not check the request's token (e.g. `STORE_UNAVAILABLE`), if it could not. */
    tokenUnchecked?: unknown;
  }
}

/**
 * The caller of a request on `tenant`'s paths, checked against its token (decisions §6): a token
 * of another tenant gets `NOT_FOUND`, indistinguishable from a missing resource; a role below
 * `role` gets `FORBIDDEN`. A token the store could not check (it is down) is that error
 * (`STORE_UNAVAILABLE`, 503), never `UNAUTHENTICATED`: the token may well be valid.
 *
 * @throws UrsaError `UNAUTHENTICATED`, `NOT_FOUND`, `FORBIDDEN`, or the token check's own error.
 */
export function callerFor(request: FastifyRequest, tenant: string, project: string, role: Role): Caller {
  const token = request.token;
  if (token === undefined) {
    if (request.tokenUnchecked !== undefined) throw request.tokenUnchecked;
    throw new UrsaError(
      'UNAUTHENTICATED',
      bearer(request) === undefined
        ? 'a bearer token is required: Authorization: Bearer <token>'
        : 'the bearer token is unknown or revoked',
    );
  }
  if (token.tenant !== null && token.tenant !== tenant) {
    throw new UrsaError('NOT_FOUND', 'no such resource');
  }
  if (RANK[token.role] < RANK[role]) {
    throw new UrsaError(
      'FORBIDDEN',
      `this needs a token with the role ${role} or higher; this token has ${token.role}`,
    );
  }
  return { tenant, project, user: token.user, role: token.role };
}

/** The bearer secret of a request, if it sent one. */
export function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}
