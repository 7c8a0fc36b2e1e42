import { createHash, randomBytes } from 'node:crypto';
import type { Store } from './open.js';

/** A token's role (decisions §6): `read` can GET, `write` changes schedulers and fires, `admin` also refreshes, manages projects and names another `runAs`. */
export type Role = 'read' | 'write' | 'admin';
export const ROLES: readonly Role[] = ['read', 'write', 'admin'];

/** A token as listed (never with its secret). `createdAt`/`revokedAt` are UTC epoch ms. */
export interface TokenRecord {
  readonly id: string;
  /** null: every tenant (an operator token). */
  readonly tenant: string | null;
  readonly role: Role;
  /** The user the token acts as. */
  readonly user: string;
  readonly label: string | null;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

/** SHA-256 hex of a token secret: what the store keeps. */
export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Bearer tokens, stored hashed (decisions §6). */
export class Tokens {
  constructor(private readonly store: Store) {}

  /** Creates a token; returns it with its secret, which is shown once and never stored. */
  async create(
    input: { tenant: string | null; role: Role; user: string; label?: string | null },
    now: number,
  ): Promise<{ token: TokenRecord; secret: string }> {
    const secret = `ursa_${randomBytes(32).toString('base64url')}`;
    const token: TokenRecord = {
      id: `tok_${randomBytes(6).toString('hex')}`,
      tenant: input.tenant,
      role: input.role,
      user: input.user,
      label: input.label ?? null,
      createdAt: now,
      revokedAt: null,
    };
    await this.store.db
      .insertInto('tokens')
      .values({
        id: token.id,
        tenant: token.tenant,
        role: token.role,
        user_name: token.user,
        label: token.label,
        hash: hashToken(secret),
        created_at: now,
        revoked_at: null,
      })
      .execute();
    return { token, secret };
  }

  /** The live token with this secret, if any. */
  async verify(secret: string): Promise<TokenRecord | undefined> {
    const row = await this.store.db
      .selectFrom('tokens')
      .selectAll()
      .where('hash', '=', hashToken(secret))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async list(): Promise<TokenRecord[]> {
    const rows = await this.store.db.selectFrom('tokens').selectAll().orderBy('created_at').execute();
    return rows.map(toRecord);
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

  /** How many live tokens exist (the first start creates an admin token when there is none). */
  async liveCount(): Promise<number> {
    const row = await this.store.db
      .selectFrom('tokens')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

function toRecord(row: {
  id: string;
  tenant: string | null;
  role: string;
  user_name: string;
  label: string | null;
  created_at: number;
  revoked_at: number | null;
}): TokenRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    role: row.role as Role,
    user: row.user_name,
    label: row.label,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
