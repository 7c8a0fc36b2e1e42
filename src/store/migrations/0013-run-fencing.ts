import { type Kysely, sql } from 'kysely';
import type { StoreDialect } from '../open.js';

// Issue #20 (decisions §5): each start of a run (an attempt) counts in `attempt` and carries a
// fencing token, assigned in the transaction that starts it; the run's later writes are
// conditioned on it (see src/store/fencing.ts). Runs started before this migration count one
// attempt and have no token. The tokens come from a sequence on PostgreSQL (several workers take
// values at once without waiting on each other) and from a one-row counter on SQLite, whose
// writers take turns (a counter, not the largest token recorded: a released run is deleted, and
// its token must not be given out again).
export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('runs').addColumn('fencing_token', 'bigint').execute();
  await sql`update runs set attempt = 1 where started_at is not null`.execute(db);
  if (dialect === 'postgres') {
    await sql`create sequence run_fencing_token as bigint`.execute(db);
  } else {
    await sql`create table fencing_counter (id integer primary key check (id = 1), last_token integer not null)`.execute(
      db,
    );
    await sql`insert into fencing_counter (id, last_token) values (1, 0)`.execute(db);
  }
}

export async function down(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  if (dialect === 'postgres') await sql`drop sequence run_fencing_token`.execute(db);
  else await db.schema.dropTable('fencing_counter').execute();
  await db.schema.alterTable('runs').dropColumn('fencing_token').execute();
  await db.schema.alterTable('runs').dropColumn('attempt').execute();
}
