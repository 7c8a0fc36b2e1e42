import type { Kysely } from 'kysely';

// The reaper looks for active processes and joins them to their runs on every pass (decisions §5).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('processes_status').on('processes').column('status').execute();
  await db.schema.createIndex('runs_process').on('runs').column('process_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_process').execute();
  await db.schema.dropIndex('processes_status').execute();
}
