import { type Kysely, sql } from 'kysely';

// Issue #24: every claim and start asks whether a scheduler has an active run (claimed, queued or
// started). A partial index holds only those, a handful per scheduler however long the history:
// the lookup costs the scheduler's active runs, and no planner, however stale its statistics on a
// young table, can walk a project's whole history for it instead (it did, seconds per batch start).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index runs_active on runs (tenant, project, name) where state in ('claimed', 'queued', 'started')`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_active').execute();
}
