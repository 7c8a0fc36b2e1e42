import type { EventPage } from '../contract/index.js';
import type { Runtime } from '../runtime/context.js';
import type { FeedLine } from '../store/feed.js';
import { lineView } from './views.js';

/**
 * The activity feed of one scheduler (spec §7): its lines, newest first, paged backwards by a
 * cursor (a feed line id). Instants in the views are ISO-8601 UTC.
 */

/** A page request: at most `limit` entries (a whole number ≥ 1), below the cursor `before` when given. */
export interface FeedPageRequest {
  readonly limit: number;
  readonly before?: number | undefined;
}

/**
 * At most `limit` feed lines of scheduler `name` of (tenant, project), newest first, below the
 * line id `before` when given (the smallest id of the previous page).
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
 */
export function schedulerFeedLines(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  name: string,
  limit: number,
  before?: number,
): Promise<FeedLine[]> {
  return rt.repos.feed.listForRef(tenant, project, 'SCHEDULER', name, limit, before);
}

/**
 * One page of the feed lines of scheduler `name`, as the REST contract's `EventPage`:
 * `nextCursor` is the id of the page's last line when an older one exists, else null.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
 */
export async function schedulerEventPage(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  name: string,
  page: FeedPageRequest,
): Promise<EventPage> {
  const lines = await schedulerFeedLines(rt, tenant, project, name, page.limit + 1, page.before);
  const shown = lines.slice(0, page.limit);
  return {
    events: shown.map(lineView),
    nextCursor: lines.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null,
  };
}
