import type { Kysely } from 'kysely';

// Issue #23: the project feed (`GET …/feed`) lists a project's lines newest first, of every
// scheduler: an index, so that a page costs the page, not the project's whole feed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('feed_project').on('feed').columns(['tenant', 'project', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('feed_project').execute();
}
