import type { InboxItemPage } from '../contract/index.js';
import type { Runtime } from '../runtime/context.js';
import { inboxItemView } from './views.js';

/**
 * The inbox of a user of a tenant (decisions §2): failed runs, late one-shots and invalid
 * documents, newest first, and marking items read. Who may read whose inbox is the interface's check.
 */

/** Which items of an inbox a page holds. */
export interface InboxPageRequest {
  /** Only items not read yet. */
  readonly unreadOnly: boolean;
  /** At most this many items (a whole number ≥ 1). */
  readonly limit: number;
  /** Only items below this id (the previous page's `nextCursor`). */
  readonly before?: number | undefined;
}

/**
 * One page of `user`'s inbox in `tenant`, newest first, as the REST contract's page:
 * `nextCursor` is the id of the page's last item when an older one exists, else null.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
 */
export async function inboxPage(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  user: string,
  request: InboxPageRequest,
): Promise<InboxItemPage> {
  const found = await rt.repos.inbox.list(tenant, user, {
    unreadOnly: request.unreadOnly,
    limit: request.limit + 1,
    ...(request.before === undefined ? {} : { beforeId: request.before }),
  });
  const items = found.slice(0, request.limit);
  return {
    items: items.map(inboxItemView),
    nextCursor: found.length > request.limit ? (items[items.length - 1]?.id ?? null) : null,
  };
}

/**
 * Marks items `ids` of `user`'s inbox in `tenant` read at the runtime's now; returns how many
 * changed. Ids of other users or tenants, unknown ids and items already read are left alone.
 */
export function markInboxRead(
  rt: Pick<Runtime, 'repos' | 'clock'>,
  tenant: string,
  user: string,
  ids: readonly number[],
): Promise<number> {
  return rt.repos.inbox.markRead(tenant, user, ids, rt.clock.now());
}
