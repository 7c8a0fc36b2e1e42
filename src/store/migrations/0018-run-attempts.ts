import type { Kysely } from 'kysely';

// Issue #22 retries: a retried run's row keeps its latest attempt; the attempts before it are kept
// here, so that a run budget counts every started attempt and the run log shows each one. Indexed
// as the runs' starts are, for the budget's count over the rolling hour and day.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('run_attempts')
    .addColumn('correlation_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('process_id', 'text')
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('run_attempts_pk', ['correlation_id', 'attempt'])
    .execute();
  await db.schema
    .createIndex('run_attempts_project_started')
    .on('run_attempts')
    .columns(['tenant', 'project', 'started_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('run_attempts').execute();
}
