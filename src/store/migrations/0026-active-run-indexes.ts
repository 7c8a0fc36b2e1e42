import { type Kysely, sql } from 'kysely';
import type { StoreDialect } from '../open.js';

// Issue #24: a run's row is written three times (claimed, started, ended), and on PostgreSQL each
// version of it goes into every index of `runs`, whether its keys changed or not (the state is
// indexed, so no update is HOT): nine indexes, 27 entries a run. The indexes that only active
// runs' queries use now hold only active rows, those of nullable columns only the rows that have
// a value, and the one on (tenant, project, name, state) goes: `runs_active` serves its active
// lookups, `runs_occurrence` a scheduler's history. Every query of these indexes names an active
// state, compares the column, or tests it for null, which PostgreSQL's planner needs to use a
// partial index. Likewise `processes_status` holds only active processes.
//
// SQLite keeps its indexes: it writes only the indexes whose columns an update changes, and its
// planner uses a partial index only for a query term written exactly as the index's condition.
const ACTIVE_RUN = sql`state in ('claimed', 'queued', 'started')`;
const ACTIVE_PROCESS = sql`status in ('ready', 'running', 'paused', 'blocked', 'suspended')`;

export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`drop index runs_state`.execute(db);
  await sql`create index runs_state on runs (state, claimed_at) where ${ACTIVE_RUN}`.execute(db);
  await sql`drop index runs_worker`.execute(db);
  await sql`create index runs_worker on runs (worker_id, state) where ${ACTIVE_RUN}`.execute(db);
  await sql`drop index runs_scheduler_state`.execute(db);
  await sql`drop index runs_process`.execute(db);
  await sql`create index runs_process on runs (process_id) where process_id is not null`.execute(db);
  await sql`drop index runs_project_started`.execute(db);
  await sql`create index runs_project_started on runs (tenant, project, started_at) where started_at is not null`.execute(
    db,
  );
  await sql`drop index runs_folded_into`.execute(db);
  await sql`create index runs_folded_into on runs (folded_into) where folded_into is not null`.execute(db);
  await sql`drop index processes_status`.execute(db);
  await sql`create index processes_status on processes (status) where ${ACTIVE_PROCESS}`.execute(db);
}

export async function down(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`drop index processes_status`.execute(db);
  await sql`create index processes_status on processes (status)`.execute(db);
  await sql`drop index runs_folded_into`.execute(db);
  await sql`create index runs_folded_into on runs (folded_into)`.execute(db);
  await sql`drop index runs_project_started`.execute(db);
  await sql`create index runs_project_started on runs (tenant, project, started_at)`.execute(db);
  await sql`drop index runs_process`.execute(db);
  await sql`create index runs_process on runs (process_id)`.execute(db);
  await sql`create index runs_scheduler_state on runs (tenant, project, name, state)`.execute(db);
  await sql`drop index runs_worker`.execute(db);
  await sql`create index runs_worker on runs (worker_id, state)`.execute(db);
  await sql`drop index runs_state`.execute(db);
  await sql`create index runs_state on runs (state)`.execute(db);
}
