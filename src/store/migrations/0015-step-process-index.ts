import { type Kysely, sql } from 'kysely';

// Issue #20: every reap (each second or so) looks for what no live worker runs. A workflow step's
// process is judged by the workflow run its step belongs to (`workflow_steps.process_id`), and the
// running workflow runs and steps of lost workers are read by their status: indexes, so that these
// reads cost what is running, not the whole history of workflow runs and steps.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('workflow_steps_process').on('workflow_steps').column('process_id').execute();
  await db.schema
    .createIndex('workflow_runs_running')
    .on('workflow_runs')
    .column('worker_id')
    .where(sql<boolean>`status = 'running'`)
    .execute();
  await db.schema
    .createIndex('workflow_steps_running')
    .on('workflow_steps')
    .column('run_id')
    .where(sql<boolean>`status = 'running'`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('workflow_steps_running').execute();
  await db.schema.dropIndex('workflow_runs_running').execute();
  await db.schema.dropIndex('workflow_steps_process').execute();
}
