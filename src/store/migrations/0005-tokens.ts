import type { Kysely } from 'kysely';

// Issue #7, decisions §6: bearer tokens bound to one tenant (or all, for operators), stored hashed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // null: every tenant (an operator token).
    .addColumn('tenant', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    // The user the token acts as: the caller of writes (createdBy, default runAs).
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('label', 'text')
    // SHA-256 of the secret, hex; the secret itself is shown once and never stored.
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tokens').execute();
}
