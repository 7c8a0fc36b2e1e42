import type { Store } from './open.js';

/** A user of a tenant (decisions §2). */
export interface User {
  readonly tenant: string;
  readonly name: string;
  /** IANA zone from the user's profile, or null (then the tenant default, then UTC). */
  readonly displayTimezone: string | null;
}

/** Users: `createdBy` and `runAs` name them. */
export class Users {
  constructor(private readonly store: Store) {}

  async get(tenant: string, name: string): Promise<User | undefined> {
    const row = await this.store.db
      .selectFrom('users')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('name', '=', name)
      .executeTakeFirst();
    return row === undefined
      ? undefined
      : { tenant: row.tenant, name: row.name, displayTimezone: row.display_timezone };
  }

  /** The users of a tenant, sorted by name. */
  async list(tenant: string): Promise<User[]> {
    const rows = await this.store.db
      .selectFrom('users')
      .selectAll()
      .where('tenant', '=', tenant)
      .orderBy('name')
      .execute();
    return rows.map((row) => ({ tenant: row.tenant, name: row.name, displayTimezone: row.display_timezone }));
  }

  /** Adds the user unless it exists; returns it. */
  async ensure(
    tenant: string,
    name: string,
    now: number,
    displayTimezone: string | null = null,
  ): Promise<User> {
    await this.store.db
      .insertInto('users')
      .values({ tenant, name, display_timezone: displayTimezone, created_at: now })
      .onConflict((oc) => oc.columns(['tenant', 'name']).doNothing())
      .execute();
    return (await this.get(tenant, name)) as User;
  }
}
