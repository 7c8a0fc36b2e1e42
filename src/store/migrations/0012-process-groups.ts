import type { Kysely } from 'kysely';

// Decisions §5 fencing: every OS process group a worker starts, with what it takes to find it
// again safely after the worker died (host, boot, pid namespace, and the leader's start time, so
// that a reused pid is never signalled). No foreign key to processes: a group's row is written
// as soon as its engine reports it, batched and retried apart from its run's own records.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('process_groups')
    .addColumn('process_id', 'text', (c) => c.notNull())
    .addColumn('pgid', 'integer', (c) => c.notNull())
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('boot_id', 'text')
    .addColumn('pid_namespace', 'text')
    .addColumn('leader_start_ticks', 'bigint')
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('ending', 'text')
    .addPrimaryKeyConstraint('process_groups_key', ['process_id', 'pgid'])
    .execute();
  await db.schema
    .createIndex('process_groups_open')
    .on('process_groups')
    .columns(['host', 'ended_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('process_groups').execute();
}
