import type { Insertable, Kysely, Selectable } from 'kysely';
import { INBOX_KINDS, type InboxKind } from '../contract/vocabulary.js';
import { UrsaError } from '../errors/index.js';
import { checkLimit } from './feed.js';
import type { Store } from './open.js';
import type { Database, InboxTable } from './schema.js';

// On the wire too (the inbox), so the contract keeps the list (issue #21 item 4).
export { INBOX_KINDS, type InboxKind } from '../contract/vocabulary.js';

/** A new inbox item for one user of a tenant. Instants are UTC epoch milliseconds. */
export interface NewInboxItem {
  readonly tenant: string;
  /** The user the item is for (a scheduler's `runAs`, a document's `createdBy`). */
  readonly user: string;
  readonly kind: InboxKind;
  /** One line. */
  readonly title: string;
  /** Free text; may span several lines. */
  readonly body: string;
  /** The project the item is about, if any. */
  readonly project?: string | null;
  /** The scheduler the item is about, if any. */
  readonly scheduler?: string | null;
  /** The run the item is about (the feed's traceId), if any. */
  readonly correlationId?: string | null;
  /** The run log (or document) to read, if any. */
  readonly logPath?: string | null;
  /** When the item was created (UTC epoch ms). */
  readonly createdAt: number;
  /** A question's asker: the credential fencing token of the agent run's attempt that asked. */
  readonly askedFencingToken?: number;
}

/** A stored inbox item. Instants are UTC epoch milliseconds. */
export interface InboxItem {
  /** Ascending in creation order; the cursor of {@link Inbox.list}. */
  readonly id: number;
  readonly tenant: string;
  readonly user: string;
  readonly kind: InboxKind;
  readonly title: string;
  readonly body: string;
  readonly project: string | null;
  readonly scheduler: string | null;
  readonly correlationId: string | null;
  readonly logPath: string | null;
  /** UTC epoch ms. */
  readonly createdAt: number;
  /** When the user marked it read (UTC epoch ms); null while unread. */
  readonly readAt: number | null;
  /** A `question` item's answer (issue #25), null until answered; absent on other kinds. */
  readonly answer?: string | null;
  /** Who answered the question; null until answered. */
  readonly answeredBy?: string | null;
  /** When the question was answered (UTC epoch ms); null until answered. */
  readonly answeredAt?: number | null;
  /** The credential fencing token of the agent run's attempt that asked the question. */
  readonly askedFencingToken?: number | null;
}

/** Which items {@link Inbox.list} returns. */
export interface InboxListOptions {
  /** Only items not marked read (default: all). */
  readonly unreadOnly?: boolean;
  /** At most this many items (a whole number ≥ 1). */
  readonly limit: number;
  /** Only items with an id below this one: pass the last id of a page to get the next. */
  readonly beforeId?: number;
}

/** How many ids one `UPDATE … WHERE id IN (…)` carries (SQLite limits bound parameters). */
const MARK_CHUNK = 500;

function toItem(row: Selectable<InboxTable>): InboxItem {
  return {
    id: Number(row.id),
    tenant: row.tenant,
    user: row.user_name,
    kind: row.kind as InboxKind,
    title: row.title,
    body: row.body,
    project: row.project,
    scheduler: row.scheduler,
    correlationId: row.correlation_id,
    logPath: row.log_path,
    createdAt: Number(row.created_at),
    readAt: row.read_at === null ? null : Number(row.read_at),
    ...(row.kind === 'question'
      ? {
          answer: row.answer,
          answeredBy: row.answered_by,
          answeredAt: row.answered_at === null ? null : Number(row.answered_at),
          askedFencingToken: row.asked_fencing_token === null ? null : Number(row.asked_fencing_token),
        }
      : {}),
  };
}

/**
 * The table row of a new, unread inbox item (to insert in a caller's transaction).
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a kind outside {@link INBOX_KINDS}.
 */
export function inboxRow(item: NewInboxItem): Insertable<InboxTable> {
  if (!(INBOX_KINDS as readonly string[]).includes(item.kind)) {
    throw new UrsaError('ARGUMENT_INVALID', `kind: ${JSON.stringify(item.kind)} is not an inbox kind`, {
      field: 'kind',
      value: item.kind,
      allowed: INBOX_KINDS.join(', '),
    });
  }
  return {
    tenant: item.tenant,
    user_name: item.user,
    created_at: item.createdAt,
    kind: item.kind,
    title: item.title,
    body: item.body,
    project: item.project ?? null,
    scheduler: item.scheduler ?? null,
    correlation_id: item.correlationId ?? null,
    log_path: item.logPath ?? null,
    read_at: null,
    asked_fencing_token: item.askedFencingToken ?? null,
  };
}

/** Inbox items per user (decisions §2): failed runs, late one-shots, invalid documents. */
export class Inbox {
  constructor(private readonly store: Store) {}

  /**
   * Adds an item, unread; returns its id.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a kind outside {@link INBOX_KINDS}.
   */
  async add(item: NewInboxItem): Promise<number> {
    const row = await this.store.db
      .insertInto('inbox')
      .values(inboxRow(item))
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  /** The items of one user of a tenant, newest first; page with `beforeId` = the last id of a page. */
  async list(tenant: string, user: string, options: InboxListOptions): Promise<InboxItem[]> {
    let query = this.store.db
      .selectFrom('inbox')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('user_name', '=', user);
    if (options.unreadOnly === true) query = query.where('read_at', 'is', null);
    if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
    const rows = await query.orderBy('id', 'desc').limit(checkLimit(options.limit)).execute();
    return rows.map(toItem);
  }

  /**
   * Marks items of one user read at `now` (UTC epoch ms); returns how many changed. Ids of other
   * users or tenants, unknown ids and items already read are left alone (and not counted).
   */
  async markRead(tenant: string, user: string, ids: readonly number[], now: number): Promise<number> {
    const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    let count = 0;
    for (let i = 0; i < unique.length; i += MARK_CHUNK) {
      const result = await this.store.db
        .updateTable('inbox')
        .set({ read_at: now })
        .where('tenant', '=', tenant)
        .where('user_name', '=', user)
        .where('id', 'in', unique.slice(i, i + MARK_CHUNK))
        .where('read_at', 'is', null)
        .executeTakeFirst();
      count += Number(result.numUpdatedRows);
    }
    return count;
  }

  /** How many items of one user are unread. */
  async unreadCount(tenant: string, user: string): Promise<number> {
    const row = await this.store.db
      .selectFrom('inbox')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('tenant', '=', tenant)
      .where('user_name', '=', user)
      .where('read_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Whether the user already has an item of this kind and title (so a repeated report is not added twice). */
  async exists(tenant: string, user: string, kind: InboxKind, title: string): Promise<boolean> {
    return inboxHas(this.store.db, tenant, user, kind, title);
  }
}

/**
 * Whether `user` of `tenant` has an inbox item of this kind and title, read on `db` (a transaction
 * that holds a lock, so that a check and an add are one step: see `Lanes.admit`).
 */
export async function inboxHas(
  db: Kysely<Database>,
  tenant: string,
  user: string,
  kind: InboxKind,
  title: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('inbox')
    .select('id')
    .where('tenant', '=', tenant)
    .where('user_name', '=', user)
    .where('kind', '=', kind)
    .where('title', '=', title)
    .executeTakeFirst();
  return row !== undefined;
}
