import type { Kysely } from 'kysely';

// Issue #22: a project's run budget counts its runs started in the rolling hour and day at every
// admission, under the project's lock: an index, so that the count costs the window, not the
// project's whole history.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('runs_project_started')
    .on('runs')
    .columns(['tenant', 'project', 'started_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_project_started').execute();
}
