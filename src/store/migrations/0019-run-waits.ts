import { type Kysely, sql } from 'kysely';

// Issue #23: a run that waited in its lane says behind which run and since when, and a request
// folded into the waiting run says into which, so that every surface can link the two both ways.
// Indexed on folded_into for the waiting run's "folded into this run" lookups. Plain DDL, the
// same on both dialects.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs add column queued_at bigint`.execute(db);
  await sql`alter table runs add column waiting_behind text`.execute(db);
  await sql`alter table runs add column folded_into text`.execute(db);
  await sql`create index runs_folded_into on runs (folded_into)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index runs_folded_into`.execute(db);
  await sql`alter table runs drop column folded_into`.execute(db);
  await sql`alter table runs drop column waiting_behind`.execute(db);
  await sql`alter table runs drop column queued_at`.execute(db);
}
