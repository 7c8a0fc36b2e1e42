import type { Kysely } from 'kysely';

// Issue #22: a pause's note, who paused and when, beside the scheduler document it paused (whose
// `enabled: false` is the pause itself). Kept here, not in the YAML, so that a write of the
// document cannot forge them; keyed by the document's key, so a `_tenant` scheduler's pause is
// its tenant-wide document's.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('scheduler_pauses')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('paused_by', 'text', (c) => c.notNull())
    .addColumn('paused_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('scheduler_pauses_pk', ['tenant', 'project', 'path'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('scheduler_pauses').execute();
}
