import type { Kysely } from 'kysely';

// Issue #20: every reap looks for the active processes no live worker runs, and a workflow step's
// process is judged by the workflow run its step belongs to (`workflow_steps.process_id`): an
// index, so that the lookup stays one per active process as the step history grows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('workflow_steps_process').on('workflow_steps').column('process_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('workflow_steps_process').execute();
}
