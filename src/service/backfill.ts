import { BACKFILL_COUNT_CAP, backfillRange, MAX_BACKFILL_OCCURRENCES } from '../decisions/backfill.js';
import { isUrsaError, UrsaError } from '../errors/index.js';
import { queueRun } from '../runs/transitions.js';
import type { Runtime } from '../runtime/context.js';
import { parseAt } from '../time/at.js';
import { formatInstant } from '../time/instant.js';
import type { TimeZone } from '../time/zone.js';
import { actorOf, type Caller } from './caller.js';
import { requestedRun, schedulerToRun } from './runs.js';

/** A backfill's range as asked: ISO-8601 date-times, with an offset or `Z`, or local in the scheduler's zone. */
export interface BackfillRequest {
  readonly from: string;
  readonly to: string;
}

/** What a backfill queued (issue #22). Instants are ISO-8601 UTC. */
export interface BackfillResult {
  readonly scheduler: string;
  readonly from: string;
  readonly to: string;
  /** The occurrences of the range, oldest first. */
  readonly occurrences: number;
  /** Of those, how many were queued now. */
  readonly queued: number;
  /** Of those, how many had a run already (run, skipped or queued before), and were left as they are. */
  readonly existing: number;
  /** The run of the oldest occurrence queued now; null when none was. */
  readonly first: { readonly correlationId: string; readonly scheduledFor: string } | null;
}

/**
 * Backfills a cron scheduler (issue #22): every occurrence of its cron from `from` to `to` (both
 * inclusive, neither later than now) that has no run yet is queued in its lane's backfill queue,
 * with trigger `backfill`, in one transaction with the audit row (the caller's); the store's
 * workers are woken. The occurrences then run oldest first, one after
 * another, each once its lane is free, through the lane's admission like any run (bounds, pause,
 * budget). Asked twice, or by two callers at once, each occurrence is queued once.
 *
 * @throws UrsaError `NOT_FOUND` (no such scheduler); `SCHEDULER_PAUSED` (paused or disabled);
 *   `ARGUMENT_INVALID` (a one-shot, a malformed or reversed range, one reaching past now, or more
 *   than 1,000 occurrences, with their count). Nothing is queued then.
 */
export async function backfillScheduler(
  rt: Runtime,
  caller: Caller,
  name: string,
  request: BackfillRequest,
): Promise<BackfillResult> {
  const { tenant, project } = caller;
  const scheduler = await schedulerToRun(rt, tenant, project, name, 'backfill');
  const { definition } = scheduler;
  if (!definition.enabled)
    throw new UrsaError(
      'SCHEDULER_PAUSED',
      `scheduler ${JSON.stringify(name)} is disabled (enabled: false); enable it to backfill it`,
      { field: 'name', value: name },
    );
  const { trigger, zone } = definition;
  if (trigger.kind !== 'cron')
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `name: scheduler ${JSON.stringify(name)} fires once, at its at: instant; only a cron scheduler has occurrences to backfill`,
      { field: 'name', value: name, allowed: 'a scheduler with a cron:' },
    );
  const now = rt.clock.now();
  const from = rangeEnd(request.from, 'from', zone);
  const to = rangeEnd(request.to, 'to', zone);
  if (from > to)
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `to: ${JSON.stringify(request.to)} is before from ${JSON.stringify(request.from)}`,
      {
        field: 'to',
        value: request.to,
        allowed: `a date-time at or after from (${formatInstant(from)})`,
      },
    );
  if (to > now)
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `to: ${JSON.stringify(request.to)} is later than now (${formatInstant(now)}); a backfill runs past occurrences only`,
      { field: 'to', value: request.to, allowed: `a date-time no later than now (${formatInstant(now)})` },
    );
  const range = backfillRange(trigger.cron, zone, from, to);
  if (range.kind === 'too-many') {
    const count = range.atLeast
      ? `more than ${BACKFILL_COUNT_CAP.toLocaleString('en')}`
      : range.count.toLocaleString('en');
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `from..to: the range holds ${count} occurrences of ${JSON.stringify(trigger.expression)}; a backfill queues at most ${MAX_BACKFILL_OCCURRENCES.toLocaleString('en')}: split it into smaller ranges`,
      {
        field: 'to',
        value: request.to,
        allowed: `a range of at most ${MAX_BACKFILL_OCCURRENCES} occurrences`,
      },
    );
  }
  const runs = range.occurrences.map((scheduledFor) =>
    queueRun(requestedRun(scheduler, { tenant, project, name }, scheduledFor, 'backfill', now), now, null),
  );
  const queued = await rt.repos.backfills.queue(runs, (count) => ({
    tenant,
    project,
    at: now,
    subjectType: 'scheduler',
    subject: name,
    action: 'backfill',
    actor: actorOf(caller),
    detail: { from: formatInstant(from), to: formatInstant(to), occurrences: runs.length, queued: count },
  }));
  if (queued.size > 0) await rt.repos.store.notifyChange();
  const first = runs.find((run) => queued.has(run.correlationId));
  rt.log.info({ scheduler: name, occurrences: runs.length, queued: queued.size }, 'backfill queued');
  return {
    scheduler: name,
    from: formatInstant(from),
    to: formatInstant(to),
    occurrences: runs.length,
    queued: queued.size,
    existing: runs.length - queued.size,
    first:
      first === undefined
        ? null
        : { correlationId: first.correlationId, scheduledFor: formatInstant(first.scheduledFor) },
  };
}

// One end of the range: an instant, or a local date-time read in the scheduler's zone.
function rangeEnd(value: string, field: 'from' | 'to', zone: TimeZone): number {
  try {
    return parseAt(value, zone).instant;
  } catch (error) {
    if (!isUrsaError(error, 'AT_INVALID')) throw error;
    // parseAt's own reason ("not a date-time", "no such date or time", "the offset is out of range").
    const reason = error.message.slice(`at: ${JSON.stringify(value)}: `.length);
    throw new UrsaError('ARGUMENT_INVALID', `${field}: ${JSON.stringify(value)}: ${reason}`, {
      field,
      value,
      allowed: `an ISO-8601 date-time: 2026-05-14T06:00:00Z, 2026-05-14T08:00:00+02:00, or local 2026-05-14T08:00:00 (read in ${zone.id})`,
    });
  }
}
