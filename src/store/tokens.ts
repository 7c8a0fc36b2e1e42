import { createHash, randomBytes } from 'node:crypto';
import { MS_PER_DAY } from '../time/calendar.js';
import type { Store } from './open.js';

/** A token's role (decisions §6): `read` can GET, `write` changes schedulers and fires, `admin` also refreshes, manages projects and names another `runAs`. */
export type Role = 'read' | 'write' | 'admin';
export const ROLES: readonly Role[] = ['read', 'write', 'admin'];

/**
 * How long a recorded last use stays current, ms: a token's `lastUsedAt` is written again only
 * when it is at least this old, so a busy token costs one UPDATE a minute, not one a request.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** The longest a rotated-out secret may keep working, ms (one day). */
export const MAX_ROTATION_GRACE_MS = MS_PER_DAY;

/** A token as listed (never with its secret). Instants are UTC epoch ms. */
export interface TokenRecord {
  readonly id: string;
  /** null: every tenant (an operator token). */
  readonly tenant: string | null;
  /** The one project of its tenant the token reaches (`_tenant` only when named); null: every project. */
  readonly project: string | null;
  readonly role: Role;
  /** The user the token acts as. */
  readonly user: string;
  readonly label: string | null;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  /** From this instant on the token is refused; null: it never expires. */
  readonly expiresAt: number | null;
  /** Its latest recorded use, at most {@link LAST_USED_RESOLUTION_MS} behind; null: never used. */
  readonly lastUsedAt: number | null;
}

/**
 * What a presented secret is (issue #19): the token it belongs to when that one is live; `expired`
 * when it is the secret of a token that is not revoked but whose expiry has passed; `unknown` for
 * anything else (no such secret, a revoked token, a secret replaced by a rotation).
 */
export type TokenCheck =
  | { readonly state: 'live'; readonly token: TokenRecord }
  | { readonly state: 'expired' }
  | { readonly state: 'unknown' };

/** SHA-256 hex of a token secret: what the store keeps. */
export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The columns that decide whether a stored token accepts a secret (UTC epoch ms). */
interface Acceptance {
  readonly hash: string;
  readonly previousHash: string | null;
  readonly previousUntil: number | null;
  readonly revokedAt: number | null;
  readonly expiresAt: number | null;
}

/**
 * Whether a stored token accepts the secret hashing to `hash` at `now` (pure): its current secret,
 * or the one its last rotation replaced while `now` is before `previousUntil`; never once revoked;
 * `expired` from `expiresAt` on.
 */
export function acceptance(token: Acceptance, hash: string, now: number): TokenCheck['state'] {
  if (token.revokedAt !== null) return 'unknown';
  const previous = token.previousHash === hash && token.previousUntil !== null && now < token.previousUntil;
  if (token.hash !== hash && !previous) return 'unknown';
  if (token.expiresAt !== null && now >= token.expiresAt) return 'expired';
  return 'live';
}

/** Whether a use at `now` is to be recorded (pure): the recorded one is missing or a minute old. */
export function lastUseIsStale(lastUsedAt: number | null, now: number): boolean {
  return lastUsedAt === null || now - lastUsedAt >= LAST_USED_RESOLUTION_MS;
}

/** Bearer tokens, stored hashed (decisions §6). */
export class Tokens {
  constructor(private readonly store: Store) {}

  /**
   * Creates a token; returns it with its secret, which is shown once and never stored.
   * `project` narrows it to one project of `tenant`; `expiresAt` (UTC epoch ms) ends it.
   */
  async create(
    input: {
      tenant: string | null;
      role: Role;
      user: string;
      label?: string | null;
      project?: string | null;
      expiresAt?: number | null;
    },
    now: number,
  ): Promise<{ token: TokenRecord; secret: string }> {
    const secret = newSecret();
    const token: TokenRecord = {
      id: `tok_${randomBytes(6).toString('hex')}`,
      tenant: input.tenant,
      project: input.project ?? null,
      role: input.role,
      user: input.user,
      label: input.label ?? null,
      createdAt: now,
      revokedAt: null,
      expiresAt: input.expiresAt ?? null,
      lastUsedAt: null,
    };
    await this.store.db
      .insertInto('tokens')
      .values({
        id: token.id,
        tenant: token.tenant,
        project: token.project,
        role: token.role,
        user_name: token.user,
        label: token.label,
        hash: hashToken(secret),
        created_at: now,
        revoked_at: null,
        expires_at: token.expiresAt,
        last_used_at: null,
        previous_hash: null,
        previous_until: null,
      })
      .execute();
    return { token, secret };
  }

  /** What `secret` is at `now` (see {@link TokenCheck}), without recording a use. Read afresh each call. */
  async check(secret: string, now: number): Promise<TokenCheck> {
    const hash = hashToken(secret);
    const rows = await this.store.db
      .selectFrom('tokens')
      .selectAll()
      .where((eb) => eb.or([eb('hash', '=', hash), eb('previous_hash', '=', hash)]))
      .execute();
    let expired = false;
    for (const row of rows) {
      const state = acceptance(
        {
          hash: row.hash,
          previousHash: row.previous_hash,
          previousUntil: instantOrNull(row.previous_until),
          revokedAt: row.revoked_at,
          expiresAt: instantOrNull(row.expires_at),
        },
        hash,
        now,
      );
      if (state === 'live') return { state, token: toRecord(row) };
      if (state === 'expired') expired = true;
    }
    return expired ? { state: 'expired' } : { state: 'unknown' };
  }

  /**
   * {@link check}, recording a live token's use at `now` when the recorded one is stale
   * ({@link LAST_USED_RESOLUTION_MS}): one conditional UPDATE, which concurrent uses of the same
   * token race on harmlessly (at most one of them writes).
   */
  async authenticate(secret: string, now: number): Promise<TokenCheck> {
    const checked = await this.check(secret, now);
    if (checked.state !== 'live' || !lastUseIsStale(checked.token.lastUsedAt, now)) return checked;
    await this.store.db
      .updateTable('tokens')
      .set({ last_used_at: now })
      .where('id', '=', checked.token.id)
      .where((eb) =>
        eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - LAST_USED_RESOLUTION_MS)]),
      )
      .execute();
    return { state: 'live', token: { ...checked.token, lastUsedAt: now } };
  }

  async list(): Promise<TokenRecord[]> {
    const rows = await this.store.db.selectFrom('tokens').selectAll().orderBy('created_at').execute();
    return rows.map(toRecord);
  }

  /**
   * Gives a live token (not revoked, not expired at `now`) a new secret, keeping its id, tenant,
   * project, role, user, label and expiry; returns it with the new secret (shown once), or
   * undefined when there is no live token with that id. The old secret stops working at once, or
   * at `now + graceMs` (at most {@link MAX_ROTATION_GRACE_MS}, checked by the caller); a secret an
   * earlier rotation replaced stops at once either way.
   */
  async rotate(
    id: string,
    now: number,
    graceMs = 0,
  ): Promise<{ token: TokenRecord; secret: string } | undefined> {
    const secret = newSecret();
    const result = await this.store.db
      .updateTable('tokens')
      // SET reads the row as it was: previous_hash gets the secret being replaced.
      .set((eb) => ({
        hash: hashToken(secret),
        previous_hash: graceMs > 0 ? eb.ref('hash') : null,
        previous_until: graceMs > 0 ? now + graceMs : null,
      }))
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    const row = await this.store.db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : { token: toRecord(row), secret };
  }

  /** Revokes a token; false when there is no live token with that id. */
  async revoke(id: string, now: number): Promise<boolean> {
    const result = await this.store.db
      .updateTable('tokens')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * How many unrevoked tokens exist, expired ones included (the first start creates an admin token
   * when there is none; an operator whose tokens all expired makes a new one with the CLI, rather
   * than a restart printing a fresh admin secret).
   */
  async liveCount(): Promise<number> {
    const row = await this.store.db
      .selectFrom('tokens')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

/** A new secret: 256 random bits. */
function newSecret(): string {
  return `ursa_${randomBytes(32).toString('base64url')}`;
}

const instantOrNull = (value: number | null): number | null => (value === null ? null : Number(value));

function toRecord(row: {
  id: string;
  tenant: string | null;
  project: string | null;
  role: string;
  user_name: string;
  label: string | null;
  created_at: number;
  revoked_at: number | null;
  expires_at: number | null;
  last_used_at: number | null;
}): TokenRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    project: row.project,
    role: row.role as Role,
    user: row.user_name,
    label: row.label,
    createdAt: Number(row.created_at),
    revokedAt: instantOrNull(row.revoked_at),
    expiresAt: instantOrNull(row.expires_at),
    lastUsedAt: instantOrNull(row.last_used_at),
  };
}
