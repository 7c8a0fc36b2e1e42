import type { Kysely } from 'kysely';
import type { StoreDialect } from '../open.js';
import { autoIncrementId } from './columns.js';

// Issue #5: the inbox, stop requests that reach a process on any worker, versioned system
// sessions (spec §6), and the lookup of a scheduler's active or waiting run (spec §5).
export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('inbox')
    .$call(autoIncrementId(dialect))
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('project', 'text')
    .addColumn('scheduler', 'text')
    .addColumn('correlation_id', 'text')
    .addColumn('log_path', 'text')
    .addColumn('read_at', 'bigint')
    .execute();
  await db.schema.createIndex('inbox_user').on('inbox').columns(['tenant', 'user_name', 'id']).execute();
  await db.schema.alterTable('processes').addColumn('stop_requested_at', 'bigint').execute();
  await db.schema.alterTable('processes').addColumn('stop_reason', 'text').execute();
  // A scheduler's system sessions, found by scheduler and version rather than by parsing names
  // (`_ursascheduler_a_v2` could be version 2 of `a` or version 1 of `a_v2`).
  await db.schema.alterTable('sessions').addColumn('scheduler', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('version', 'integer').execute();
  await db.schema
    .createIndex('sessions_scheduler')
    .on('sessions')
    .columns(['tenant', 'project', 'scheduler', 'version'])
    .execute();
  await db.schema
    .createIndex('runs_scheduler_state')
    .on('runs')
    .columns(['tenant', 'project', 'name', 'state'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_scheduler_state').execute();
  await db.schema.dropIndex('sessions_scheduler').execute();
  await db.schema.alterTable('sessions').dropColumn('version').execute();
  await db.schema.alterTable('sessions').dropColumn('scheduler').execute();
  await db.schema.alterTable('processes').dropColumn('stop_reason').execute();
  await db.schema.alterTable('processes').dropColumn('stop_requested_at').execute();
  await db.schema.dropTable('inbox').execute();
}
