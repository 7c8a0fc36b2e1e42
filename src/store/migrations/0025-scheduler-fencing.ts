import type { Kysely } from 'kysely';

// Fencing tokens per scheduler instead of one sequence for the store (decisions §5, hidden
// schedulers of spec §10b): a token counted over every attempt in the store told whoever read a
// run log how many attempts other schedulers — hidden ones, other tenants' — had started in
// between. Each scheduler now counts its own. The store's counter (`fencing_counter` on SQLite,
// the `run_fencing_token` sequence on PostgreSQL) stays, no longer moved: its last value is the
// floor every scheduler's count starts above, so that no token given out before this migration
// is given out again to the scheduler that had it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('scheduler_fencing')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('last_token', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('scheduler_fencing_pk', ['tenant', 'project', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('scheduler_fencing').execute();
}
