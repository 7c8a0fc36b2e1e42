import type { Kysely } from 'kysely';
import type { StoreDialect } from '../open.js';
import { autoIncrementId } from './columns.js';

// Issue #19: the audit trail. One row per attributed action: every document version written
// (create, update), every delete and restore, and every fire, stop and refresh, with who did it
// (user, token id, interface, whether an agent did) — written in the transaction of the action
// for document writes, so a version never exists without its row.
export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .$call(autoIncrementId(dialect))
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    // document | scheduler | process | workflow-run | project
    .addColumn('subject_type', 'text', (c) => c.notNull())
    // A document path (for a delete: the path it was deleted from), a scheduler name, a process
    // or workflow-run id; '' for a project refresh.
    .addColumn('subject', 'text', (c) => c.notNull())
    // create | update | delete | restore | fire | stop | refresh
    .addColumn('action', 'text', (c) => c.notNull())
    // The document's version after the action (null for other subjects).
    .addColumn('version', 'integer')
    // For a delete and a restore: the document's path in the trash.
    .addColumn('trash_path', 'text')
    .addColumn('user_name', 'text', (c) => c.notNull())
    // The bearer token's id (never its secret); null for a local command or Ursa itself.
    .addColumn('token_id', 'text')
    // rest | mcp | cli | library | ursa
    .addColumn('interface', 'text', (c) => c.notNull())
    .addColumn('agent', 'integer', (c) => c.notNull())
    // JSON of what else the action says (a fire's correlationId, a stop's reason, a refresh's scope).
    .addColumn('detail', 'text')
    .execute();
  await db.schema
    .createIndex('audit_log_subject')
    .on('audit_log')
    .columns(['tenant', 'project', 'subject_type', 'subject', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_log_trash_path')
    .on('audit_log')
    .columns(['tenant', 'project', 'trash_path'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
}
