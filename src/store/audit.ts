import type { Kysely, Selectable } from 'kysely';
import { type ActorInterface, DOCUMENT_ACTIONS } from '../contract/vocabulary.js';
import { checkLimit } from './feed.js';
import type { DocumentKey } from './keys.js';
import type { Store } from './open.js';
import type { AuditLogTable, Database } from './schema.js';

// On the wire too (a document's history), so the contract keeps the lists (issue #21 item 4).
export {
  ACTOR_INTERFACES,
  type ActorInterface,
  DOCUMENT_ACTIONS,
  type DocumentAction,
} from '../contract/vocabulary.js';

/** Who did an action (issue #19): the user, the bearer token's id (null without one), through what, and whether an agent did it. */
export interface Actor {
  readonly user: string;
  readonly tokenId: string | null;
  readonly interface: ActorInterface;
  /** True for an agent's tool call (spec §9 tools): its writes are marked as an agent's. */
  readonly agent: boolean;
}

/** Ursa’s own actions (a fired one-shot moved to the trash, spec §10a). */
export const URSA_ACTOR: Actor = { user: 'ursa', tokenId: null, interface: 'ursa', agent: false };

/** An application's call through the services (no token): `user` did it through the library. */
export function libraryActor(user: string): Actor {
  return { user, tokenId: null, interface: 'library', agent: false };
}

/** A local `ursa` command on the store (no token): `user` did it through the command line. */
export function cliActor(user: string): Actor {
  return { user, tokenId: null, interface: 'cli', agent: false };
}

/** What an audit row is about. */
export type AuditSubject = 'document' | 'scheduler' | 'process' | 'workflow-run' | 'project';

/** What was done: document versions and deletes, restores; fires, backfills, stops, refreshes, pauses and resumes. */
export const AUDIT_ACTIONS = [
  ...DOCUMENT_ACTIONS,
  'fire',
  'backfill',
  'stop',
  'refresh',
  'pause',
  'resume',
] as const;

/** One of {@link AUDIT_ACTIONS}. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One action to record. `at` is UTC epoch ms. */
export interface AuditEntry {
  readonly tenant: string;
  readonly project: string;
  readonly at: number;
  readonly subjectType: AuditSubject;
  /** A document path (a delete: where it was), a scheduler name, a process or workflow-run id; '' for a project. */
  readonly subject: string;
  readonly action: AuditAction;
  /** A document's version after the action. */
  readonly version?: number;
  /** A delete's or restore's path in `_vance/trash/`. */
  readonly trashPath?: string;
  readonly actor: Actor;
  /** What else the action says (a fire's correlationId, a stop's reason). */
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** A recorded action, as read back. */
export interface AuditRecord extends Required<Omit<AuditEntry, 'version' | 'trashPath' | 'detail'>> {
  /** Increasing in the order actions were recorded: the cursor of a page. */
  readonly id: number;
  readonly version: number | null;
  readonly trashPath: string | null;
  readonly detail: Readonly<Record<string, unknown>> | null;
}

/** Writes one audit row on `db` — the store, or the transaction of the action it records. */
export async function insertAudit(db: Kysely<Database>, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      tenant: entry.tenant,
      project: entry.project,
      at: entry.at,
      subject_type: entry.subjectType,
      subject: entry.subject,
      action: entry.action,
      version: entry.version ?? null,
      trash_path: entry.trashPath ?? null,
      user_name: entry.actor.user,
      token_id: entry.actor.tokenId,
      interface: entry.actor.interface,
      agent: entry.actor.agent ? 1 : 0,
      detail: entry.detail === undefined ? null : JSON.stringify(entry.detail),
    })
    .execute();
}

/**
 * Runs `write` on `db` — in one transaction with the audit row `entry(result)` when `entry` is
 * given (its undefined: the write did nothing worth recording) — so an action and its attribution
 * are stored together or not at all.
 */
export async function writeAudited<T>(
  db: Kysely<Database>,
  write: (db: Kysely<Database>) => Promise<T>,
  entry: ((result: T) => AuditEntry | undefined) | undefined,
): Promise<T> {
  if (entry === undefined) return write(db);
  return db.transaction().execute(async (trx) => {
    const result = await write(trx);
    const row = entry(result);
    if (row !== undefined) await insertAudit(trx, row);
    return result;
  });
}

/** The audit rows of one document path: its versions, deletes and restores, also those recorded under it as a trash path. */
function pathRows(db: Kysely<Database>, key: DocumentKey) {
  return db
    .selectFrom('audit_log')
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where((eb) =>
      eb.or([
        eb.and([eb('subject_type', '=', 'document'), eb('subject', '=', key.path)]),
        eb('trash_path', '=', key.path),
      ]),
    );
}

/**
 * The highest document version the audit trail records at `key.path` (0: none) — a version
 * written, deleted or restored there, also as a trash path — read on `db`, the store or the
 * transaction of a write that must not reuse it (`Documents.put`, `restore`; issue #19).
 */
export async function highestAuditedVersion(db: Kysely<Database>, key: DocumentKey): Promise<number> {
  const row = await pathRows(db, key)
    .select((eb) => eb.fn.max('version').as('v'))
    .executeTakeFirst();
  return Number(row?.v ?? 0);
}

function toRecord(row: Selectable<AuditLogTable>): AuditRecord {
  return {
    id: Number(row.id),
    tenant: row.tenant,
    project: row.project,
    at: Number(row.at),
    subjectType: row.subject_type as AuditSubject,
    subject: row.subject,
    action: row.action as AuditAction,
    version: row.version === null ? null : Number(row.version),
    trashPath: row.trash_path,
    actor: {
      user: row.user_name,
      tokenId: row.token_id,
      interface: row.interface as ActorInterface,
      agent: Number(row.agent) === 1,
    },
    detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
  };
}

/** The audit trail (issue #19): who wrote each document version, deleted, restored, fired, stopped, refreshed. */
export class Audit {
  constructor(private readonly store: Store) {}

  /** Records an action that is not a document write (those are recorded by `Documents` in their own transaction). */
  record(entry: AuditEntry): Promise<void> {
    return insertAudit(this.store.db, entry);
  }

  /**
   * The history of one document path, newest first: its versions (create, update), deletes and
   * restores — also those recorded under its trash path, so a trashed document's history can be
   * read at either path. At most `limit` rows, below the cursor `before` (an id); `nextCursor` is
   * the `before` of the next page, null on the last.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
   */
  async documentHistory(
    key: DocumentKey,
    page: { readonly limit: number; readonly before?: number | undefined },
  ): Promise<{ records: AuditRecord[]; nextCursor: number | null }> {
    let query = pathRows(this.store.db, key).selectAll();
    if (page.before !== undefined) query = query.where('id', '<', page.before);
    const rows = await query
      .orderBy('id', 'desc')
      .limit(checkLimit(page.limit) + 1)
      .execute();
    const records = rows.slice(0, page.limit).map(toRecord);
    const last = records[records.length - 1];
    return { records, nextCursor: rows.length > page.limit && last !== undefined ? last.id : null };
  }
}
