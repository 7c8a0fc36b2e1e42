import type { Kysely } from 'kysely';

// Issue #6: settings (decisions §2 cascade), project lifecycle (spec §3 activity), the one-shot fired
// marker (spec §10a), and what a schedule's timing was computed from (refresh keeps unchanged state).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('settings')
    .addColumn('tenant', 'text', (c) => c.notNull())
    // `user`, `tenant` or `project`; `subject` is the user or project name ('' for the tenant).
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('settings_pk', ['tenant', 'scope', 'subject', 'key'])
    .execute();
  await db.schema
    .createTable('projects')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    // An operator's explicit suspension wins over documents and pins (spec §3).
    .addColumn('suspended', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('projects_pk', ['tenant', 'project'])
    .execute();
  await db.schema
    .createTable('oneshot_fires')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // The consumed `at:` instant: the marker only counts against a registration with the same one.
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('correlation_id', 'text', (c) => c.notNull())
    .addColumn('fired_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oneshot_fires_pk', ['tenant', 'project', 'name', 'at'])
    .execute();
  await db.schema.alterTable('schedule_state').addColumn('timing', 'text').execute();
  // A document in `_vance/trash/` remembers where it came from, so `restore` can put it back.
  await db.schema.alterTable('documents').addColumn('trashed_from', 'text').execute();
  await db.schema.createIndex('feed_at').on('feed').column('at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('feed_at').execute();
  await db.schema.alterTable('documents').dropColumn('trashed_from').execute();
  await db.schema.alterTable('schedule_state').dropColumn('timing').execute();
  await db.schema.dropTable('oneshot_fires').execute();
  await db.schema.dropTable('projects').execute();
  await db.schema.dropTable('settings').execute();
}
