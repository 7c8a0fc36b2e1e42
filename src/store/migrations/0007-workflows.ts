import type { Kysely } from 'kysely';

// Issue #10: workflow runs with the YAML frozen at start, and their steps.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflow_runs')
    // 8 hex digits (spec §4.2).
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('workflow', 'text', (c) => c.notNull())
    // running | completed | failed | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('params', 'text', (c) => c.notNull())
    // The workflow document as it was at start: later edits do not change a run.
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('run_as', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    // The scheduler run that started it, if a scheduler did.
    .addColumn('correlation_id', 'text')
    .addColumn('worker_id', 'text')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('stop_requested_at', 'bigint')
    .execute();
  await db.schema
    .createTable('workflow_steps')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('recipe', 'text', (c) => c.notNull())
    // pending | running | completed | failed | cancelled | skipped
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('process_id', 'text')
    .addColumn('output', 'text')
    .addColumn('reason', 'text')
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addPrimaryKeyConstraint('workflow_steps_pk', ['run_id', 'position'])
    .execute();
  await db.schema
    .createIndex('workflow_runs_project')
    .on('workflow_runs')
    .columns(['tenant', 'project', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_steps').execute();
  await db.schema.dropTable('workflow_runs').execute();
}
