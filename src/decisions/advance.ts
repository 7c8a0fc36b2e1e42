import { nextFireTime, previousFireTime } from '../cron/index.js';
import type { ScheduleBounds, SchedulerTrigger } from '../scheduler/definition.js';
import type { TimeZone } from '../time/zone.js';
import { searchFrom, UNBOUNDED, withinEnd } from './bounds.js';

/** What the advance decision needs of a scheduler: when it fires, where, and between which instants. */
export interface ScheduleTiming {
  readonly trigger: SchedulerTrigger;
  readonly zone: TimeZone;
  /** `startAt` and `endAt` (issue #22); none when absent. */
  readonly bounds?: ScheduleBounds;
}

/** The result of claiming one due occurrence (decisions §4). Instants are UTC epoch ms. */
export interface Advance {
  /** The occurrence the claim serves: the observed due instant, never the wall clock. */
  readonly scheduledFor: number;
  /** The occurrence to wait for next: the first after max(now, dueAt); null when there is none. */
  readonly nextRunAt: number | null;
  /** True when at least one further occurrence after `scheduledFor` was already due at `now`. */
  readonly coalesced: boolean;
  /** The newest occurrence at or before `now` (equal to `scheduledFor` when not coalesced). */
  readonly newestDue: number;
}

/**
 * The first occurrence a newly registered (or changed) scheduler waits for: the next cron fire
 * time strictly after `now` and at or after `startAt`, or the `at:` instant (even if past:
 * one-shots catch up, spec §10a); null when none comes at or before `endAt`.
 */
export function firstRunAt(schedule: ScheduleTiming, now: number): number | null {
  const { trigger } = schedule;
  if (trigger.kind === 'at') return trigger.instant;
  const bounds = schedule.bounds ?? UNBOUNDED;
  return withinEnd(bounds, nextFireTime(trigger.cron, schedule.zone, searchFrom(bounds, now)));
}

/**
 * Advances a schedule past its due occurrence `dueAt` at the instant `now` (decisions §4).
 *
 * The next occurrence is computed from `now`, not from `dueAt`, so a schedule that fell behind
 * by any length runs once: `coalesced` is found with one extra cron step (is the occurrence after
 * `dueAt` already due?) and `newestDue` with one `previous` step — never by walking the backlog.
 * A clock slightly behind `dueAt` still advances past `dueAt`, so nothing is claimed twice.
 * With `endAt` (issue #22), occurrences after it are neither absorbed nor waited for.
 */
export function scheduleAdvance(schedule: ScheduleTiming, dueAt: number, now: number): Advance {
  const { trigger, zone } = schedule;
  if (trigger.kind === 'at') {
    return { scheduledFor: dueAt, nextRunAt: null, coalesced: false, newestDue: dueAt };
  }
  const bounds = schedule.bounds ?? UNBOUNDED;
  const lastDue = Math.min(now, bounds.endAt ?? now);
  const afterDue = nextFireTime(trigger.cron, zone, dueAt);
  const coalesced = afterDue !== null && afterDue <= lastDue;
  const nextRunAt =
    coalesced || now > dueAt ? nextFireTime(trigger.cron, zone, Math.max(now, dueAt)) : afterDue;
  const newestDue = coalesced ? (previousFireTime(trigger.cron, zone, lastDue + 1) ?? dueAt) : dueAt;
  return { scheduledFor: dueAt, nextRunAt: withinEnd(bounds, nextRunAt), coalesced, newestDue };
}
