import type { Kysely } from 'kysely';
import type { StoreDialect } from '../open.js';
import { autoIncrementId } from './columns.js';

// Instants are bigint epoch milliseconds (integer on SQLite); see schema.ts for why.
export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('documents')
    .$call(autoIncrementId(dialect))
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addUniqueConstraint('documents_key', ['tenant', 'project', 'path'])
    .execute();
  await db.schema.createIndex('documents_expires_at').on('documents').column('expires_at').execute();

  await db.schema
    .createTable('document_archive')
    .$call(autoIncrementId(dialect))
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('archived_at', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('document_archive_key')
    .on('document_archive')
    .columns(['tenant', 'project', 'path', 'version'])
    .execute();

  await db.schema
    .createTable('schedule_state')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('document_version', 'integer', (c) => c.notNull())
    .addColumn('next_run_at', 'bigint')
    .addColumn('last_scheduled_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('schedule_state_pk', ['tenant', 'project', 'name'])
    .execute();
  await db.schema
    .createIndex('schedule_state_next_run_at')
    .on('schedule_state')
    .column('next_run_at')
    .execute();

  await db.schema
    .createTable('runs')
    .addColumn('correlation_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scheduled_for', 'bigint', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('coalesced', 'integer', (c) => c.notNull())
    .addColumn('coalesced_until', 'bigint')
    .addColumn('claimed_at', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('run_as', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('process_id', 'text')
    .addColumn('log_path', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    // Exactly once per occurrence (decisions §4): a second claim of the same instant cannot insert.
    .addUniqueConstraint('runs_occurrence', ['tenant', 'project', 'name', 'scheduled_for'])
    .execute();
  await db.schema.createIndex('runs_state').on('runs').column('state').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('owner_user', 'text', (c) => c.notNull())
    .addColumn('system', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('sessions_name', ['tenant', 'project', 'name'])
    .execute();

  await db.schema
    .createTable('processes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('recipe', 'text', (c) => c.notNull())
    .addColumn('engine', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('owner_user', 'text', (c) => c.notNull())
    .addColumn('trigger_origin', 'text', (c) => c.notNull())
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('initial_message', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('exit_code', 'integer')
    .addColumn('reason', 'text')
    .addColumn('output_tail', 'text')
    .addColumn('error_tail', 'text')
    .execute();
  await db.schema
    .createIndex('processes_session')
    .on('processes')
    .columns(['session_id', 'status'])
    .execute();

  await db.schema
    .createTable('feed')
    .$call(autoIncrementId(dialect))
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('ref_type', 'text', (c) => c.notNull())
    .addColumn('ref_id', 'text', (c) => c.notNull())
    .addColumn('trace_id', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('log_path', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('feed_ref')
    .on('feed')
    .columns(['tenant', 'project', 'ref_type', 'ref_id', 'id'])
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_timezone', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('users_pk', ['tenant', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'users',
    'feed',
    'processes',
    'sessions',
    'runs',
    'schedule_state',
    'document_archive',
    'documents',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
