import type { Kysely } from 'kysely';

// Issue #19: each run keeps the lock mode its scheduler had when the run was claimed, so a run of a
// `hidden` scheduler stays hidden from agents after the scheduler is deleted or made `full`.
// Runs claimed before this migration read as `full`: for them only the scheduler's mode now counts.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('lock_mode', 'text', (c) => c.notNull().defaultTo('full'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('lock_mode').execute();
}
