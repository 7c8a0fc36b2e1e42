import type { FastifyRequest } from 'fastify';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { AGENT_CALLBACK_PREFIX } from '../runtime/hand-off.js';
import type { Caller } from '../service/caller.js';
import { type Role, TENANT_PROJECT, type TokenRecord } from '../service/records.js';
import { checkToken } from '../service/tokens.js';

const RANK: Record<Role, number> = { read: 0, write: 1, admin: 2 };

declare module 'fastify' {
  interface FastifyRequest {
    /** The token the request authenticated with (decisions §6); set by the auth hook. */
    token?: TokenRecord;
    /** Set by the auth hook when the request presented the secret of a token that has expired. */
    tokenExpired?: boolean;
    /** Why the auth hook could not check the request's token (e.g. `STORE_UNAVAILABLE`), if it could not. */
    tokenUnchecked?: unknown;
  }
}

/**
 * The auth hook of every request (decisions §6, issue #19): looks the bearer secret up afresh in
 * the store — nothing is cached, so a revocation, rotation or expiry holds from the very next
 * request, on any connection — and records the token's use (throttled, see `Tokens.authenticate`).
 * Refuses nothing itself: routes that need a token ask {@link callerFor}. A token that cannot be
 * checked (the store is down) is neither valid nor unknown: the error is kept for the routes that
 * need the caller (503), and the rest (health, the page) answer as ever.
 */
export async function authenticate(request: FastifyRequest, rt: Runtime): Promise<void> {
  const secret = bearer(request);
  if (secret === undefined) return;
  // An agent callback carries a run credential, no token (decisions §6): not looked up as one.
  if (request.url.startsWith(`${AGENT_CALLBACK_PREFIX}/`)) return;
  try {
    const checked = await checkToken(rt, secret);
    if (checked.state === 'live') request.token = checked.token;
    else if (checked.state === 'expired') request.tokenExpired = true;
  } catch (error) {
    request.tokenUnchecked = error;
  }
}

/**
 * The caller of a request on `tenant`'s `project` paths, checked against its token (decisions
 * §6): a token of another tenant, or one scoped to another project of this tenant (`_tenant`
 * included), gets `NOT_FOUND`, indistinguishable from a missing resource; a role below `role`
 * gets `FORBIDDEN`. A token the store could not check (it is down) is that error
 * (`STORE_UNAVAILABLE`, 503), never `UNAUTHENTICATED`: the token may well be valid. The caller
 * carries the token's id and the `rest` interface, for the audit trail (issue #19).
 *
 * @throws UrsaError `UNAUTHENTICATED`, `NOT_FOUND`, `FORBIDDEN`, or the token check's own error.
 */
export function callerFor(request: FastifyRequest, tenant: string, project: string, role: Role): Caller {
  return checkedCaller(request, tenant, project, role);
}

/**
 * The caller of a request on `tenant`'s tenant-wide paths (its inbox, a refresh of every project):
 * as {@link callerFor}, and a token scoped to one project — `_tenant` too — gets `NOT_FOUND`,
 * since these paths reach every project of the tenant. The caller's project is `_tenant`.
 *
 * @throws UrsaError `UNAUTHENTICATED`, `NOT_FOUND` or `FORBIDDEN`.
 */
export function tenantCallerFor(request: FastifyRequest, tenant: string, role: Role): Caller {
  return checkedCaller(request, tenant, undefined, role);
}

/** `project` undefined: a tenant-wide path, which only a token without a project scope reaches. */
function checkedCaller(
  request: FastifyRequest,
  tenant: string,
  project: string | undefined,
  role: Role,
): Caller {
  const token = request.token;
  if (token === undefined) {
    if (request.tokenUnchecked !== undefined) throw request.tokenUnchecked;
    throw new UrsaError(
      'UNAUTHENTICATED',
      bearer(request) === undefined
        ? 'a bearer token is required: Authorization: Bearer <token>'
        : // Only the holder of a real secret learns that it expired: nothing about the token itself.
          request.tokenExpired
          ? 'the bearer token has expired'
          : 'the bearer token is unknown or revoked',
    );
  }
  if (token.tenant !== null && token.tenant !== tenant) {
    throw new UrsaError('NOT_FOUND', 'no such resource');
  }
  if (token.project !== null && token.project !== project) {
    throw new UrsaError('NOT_FOUND', 'no such resource');
  }
  if (RANK[token.role] < RANK[role]) {
    throw new UrsaError(
      'FORBIDDEN',
      `this needs a token with the role ${role} or higher; this token has ${token.role}`,
    );
  }
  return {
    tenant,
    project: project ?? TENANT_PROJECT,
    user: token.user,
    role: token.role,
    tokenId: token.id,
    interface: 'rest',
  };
}

/** The bearer secret of a request, if it sent one. */
export function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}
