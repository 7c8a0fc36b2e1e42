import type { Kysely } from 'kysely';

// Decisions §5: running processes hold a lease their worker renews. The lease is the worker's
// heartbeat; a run names the worker that claimed it, so a live worker can finish a dead one's work.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .addColumn('stopped_at', 'bigint')
    .execute();
  await db.schema.alterTable('runs').addColumn('worker_id', 'text').execute();
  await db.schema.createIndex('runs_worker').on('runs').columns(['worker_id', 'state']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_worker').execute();
  await db.schema.alterTable('runs').dropColumn('worker_id').execute();
  await db.schema.dropTable('workers').execute();
}
