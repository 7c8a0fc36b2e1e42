import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

// Issue #26: a store records its own identity, and every process group carries the identity of
// the store whose worker recorded it, and every worker the store it registered on. A copy of the store (`ursa store copy`, `ursa restore`)
// keeps the target's own identity, so a worker on the copy never takes the source's groups for
// leftovers of its own lost workers. Groups recorded before this migration were this store's.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('store_identity')
    // Always 1: the table holds one row.
    .addColumn('slot', 'integer', (c) => c.primaryKey().check(sql`slot = 1`))
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  const storeId = `store_${randomUUID()}`;
  await sql`insert into store_identity (slot, store_id, created_at) values (1, ${storeId}, ${Date.now()})`.execute(
    db,
  );
  for (const table of ['process_groups', 'workers']) {
    await db.schema.alterTable(table).addColumn('store_id', 'text').execute();
    await sql`update ${sql.table(table)} set store_id = ${storeId}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workers').dropColumn('store_id').execute();
  await db.schema.alterTable('process_groups').dropColumn('store_id').execute();
  await db.schema.dropTable('store_identity').execute();
}
