import { type EventPage, FEED_KINDS } from '../contract/index.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { FeedFilter, FeedLine } from '../store/feed.js';
import { parseInstant } from '../time/instant.js';
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
export function schedulerEventPage(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  name: string,
  page: FeedPageRequest,
): Promise<EventPage> {
  return eventPage(rt, tenant, project, { ref: { type: 'SCHEDULER', id: name } }, page);
}

/** What narrows a project's feed (issue #23), as a request gives it: instants as ISO-8601 text. */
export interface ProjectFeedRequest extends FeedPageRequest {
  readonly scheduler?: string | undefined;
  /** Comma-separated kinds, e.g. `START,END`. */
  readonly kind?: string | undefined;
  readonly correlationId?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
}

/**
 * One page of the feed lines of a whole project (issue #23), newest first, narrowed by scheduler,
 * kind, run (`correlationId`) and `since` (inclusive) to `until` (exclusive), as the REST
 * contract's `EventPage`.
 *
 * @throws UrsaError `INSTANT_INVALID` for a `since` or `until` that is no instant;
 *   `ARGUMENT_INVALID` for an unknown kind, a `limit` that is not a whole number ≥ 1, or `since`
 *   after `until`.
 */
export function projectEventPage(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  request: ProjectFeedRequest,
): Promise<EventPage> {
  const since = request.since === undefined ? undefined : parseInstant(request.since, 'since');
  const until = request.until === undefined ? undefined : parseInstant(request.until, 'until');
  if (since !== undefined && until !== undefined && since > until) {
    throw new UrsaError('ARGUMENT_INVALID', `since: ${request.since} is after until: ${request.until}`, {
      field: 'since',
      value: request.since,
      allowed: `an instant not after until (${request.until})`,
    });
  }
  const filter: FeedFilter = {
    ref: request.scheduler === undefined ? undefined : { type: 'SCHEDULER', id: request.scheduler },
    kinds: request.kind === undefined ? undefined : parseKinds(request.kind),
    traceId: request.correlationId,
    since,
    until,
  };
  return eventPage(rt, tenant, project, filter, request);
}

/** @throws UrsaError `ARGUMENT_INVALID` naming the kind that is not START, END or SKIPPED. */
function parseKinds(text: string): FeedLine['kind'][] {
  return text.split(',').map((kind) => {
    if ((FEED_KINDS as readonly string[]).includes(kind)) return kind as FeedLine['kind'];
    throw new UrsaError('ARGUMENT_INVALID', `kind: ${JSON.stringify(kind)} is not a kind of feed line`, {
      field: 'kind',
      value: kind,
      allowed: FEED_KINDS.join(', '),
    });
  });
}

/** A page of the lines `filter` picks: `nextCursor` is the page's last id when an older line exists. */
async function eventPage(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  filter: FeedFilter,
  page: FeedPageRequest,
): Promise<EventPage> {
  const lines = await rt.repos.feed.list(tenant, project, filter, page.limit + 1, page.before);
  const shown = lines.slice(0, page.limit);
  return {
    events: shown.map(lineView),
    nextCursor: lines.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null,
  };
}
