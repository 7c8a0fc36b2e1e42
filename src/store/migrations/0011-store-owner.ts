import { type Kysely, sql } from 'kysely';

// Decisions §5: one serving process per SQLite store, recorded in the store itself. The one row
// names the worker that serves it; that worker's heartbeat (workers.heartbeat_at) is its lease.
// Created on PostgreSQL too (the same schema on every dialect), where it stays empty.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('store_owner')
    // Always 1: the table holds at most one row.
    .addColumn('slot', 'integer', (c) => c.primaryKey().check(sql`slot = 1`))
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('store_owner').execute();
}
