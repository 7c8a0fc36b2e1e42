import { type Kysely, sql } from 'kysely';

// Issue #22 retries: a retried run's row keeps its latest attempt; the attempts before it are kept
// here, so that a run budget counts every started attempt and the run log shows each one. Indexed
// as the runs' starts are, for the budget's count over the rolling hour and day. Plain DDL, the
// same on both dialects.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table run_attempts (
      correlation_id text not null,
      attempt integer not null,
      tenant text not null,
      project text not null,
      process_id text,
      started_at bigint not null,
      ended_at bigint,
      reason text,
      constraint run_attempts_pk primary key (correlation_id, attempt)
    )`.execute(db);
  await sql`create index run_attempts_project_started on run_attempts (tenant, project, started_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table run_attempts`.execute(db);
}
