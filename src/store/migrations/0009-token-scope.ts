import type { Kysely } from 'kysely';

// Issue #19: a token narrowed further than its role — an expiry, a last-used time, a scope of one
// project, and the hash of the secret it replaced on rotation with how long that one still works.
// One ALTER per column: SQLite adds a single column per statement.
const COLUMNS = [
  // null: every project of the token's tenant; else the one project (`_tenant` included) it reaches.
  ['project', 'text'],
  // UTC epoch ms from which the token is refused; null: it never expires.
  ['expires_at', 'bigint'],
  // UTC epoch ms of a use, recorded at most once a minute; null: never used.
  ['last_used_at', 'bigint'],
  // SHA-256 hex of the secret a rotation replaced, accepted until previous_until (UTC epoch ms).
  ['previous_hash', 'text'],
  ['previous_until', 'bigint'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, type] of COLUMNS) {
    await db.schema.alterTable('tokens').addColumn(name, type).execute();
  }
  await db.schema.createIndex('tokens_previous_hash').on('tokens').column('previous_hash').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tokens_previous_hash').execute();
  for (const [name] of [...COLUMNS].reverse()) {
    await db.schema.alterTable('tokens').dropColumn(name).execute();
  }
}
