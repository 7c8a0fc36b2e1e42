import type { ScheduleBounds } from '../scheduler/definition.js';

/** No bounds: what a scheduler without `startAt`, `endAt` and `maxRuns` has. */
export const UNBOUNDED: ScheduleBounds = { startAt: undefined, endAt: undefined, maxRuns: undefined };

/** Whether any bound is set. */
export function isBounded(bounds: ScheduleBounds): boolean {
  return bounds.startAt !== undefined || bounds.endAt !== undefined || bounds.maxRuns !== undefined;
}

/**
 * Why bounds refuse a run: its instant is before `startAt` or after `endAt`, or the scheduler has
 * started `maxRuns` runs already.
 */
export type BoundsRefusal = 'before-start' | 'after-end' | 'max-runs';

/**
 * The bounds' verdict on a run about to start, pure: the refusal, or undefined when the bounds let
 * it start. `instant` is the occurrence the run serves (a manual fire's: the instant it was
 * requested), UTC ms; `runsStarted` how many runs of the scheduler started so far (only read when
 * `maxRuns` is set). `startAt` and `endAt` are inclusive.
 */
export function boundsRefusal(
  bounds: ScheduleBounds,
  instant: number,
  runsStarted: number,
): BoundsRefusal | undefined {
  if (bounds.startAt !== undefined && instant < bounds.startAt) return 'before-start';
  if (bounds.endAt !== undefined && instant > bounds.endAt) return 'after-end';
  if (maxRunsSpent(bounds, runsStarted)) return 'max-runs';
  return undefined;
}

/**
 * Why a bounded scheduler fires no more at `now` (UTC ms), for list and describe: `ended` once
 * `now` is past `endAt`, `max-runs` once it started `maxRuns` runs; undefined while it may fire.
 */
export function boundsSpent(
  bounds: ScheduleBounds,
  now: number,
  runsStarted: number,
): 'ended' | 'max-runs' | undefined {
  if (maxRunsSpent(bounds, runsStarted)) return 'max-runs';
  if (bounds.endAt !== undefined && now > bounds.endAt) return 'ended';
  return undefined;
}

/** Whether `runsStarted` runs spend the bounds' `maxRuns`: the scheduler starts no more. */
export function maxRunsSpent(bounds: ScheduleBounds, runsStarted: number): boolean {
  return bounds.maxRuns !== undefined && runsStarted >= bounds.maxRuns;
}

/**
 * An occurrence as the bounds let it be waited for: `next` (UTC ms, or null for none) when it lies
 * at or before `endAt`, else null — the schedule has no further occurrence.
 */
export function withinEnd(bounds: ScheduleBounds, next: number | null): number | null {
  return next !== null && bounds.endAt !== undefined && next > bounds.endAt ? null : next;
}

/**
 * The instant a cron search for the first occurrence starts after: `now`, or just before
 * `startAt` when that is later, so that an occurrence at `startAt` itself counts (UTC ms).
 */
export function searchFrom(bounds: ScheduleBounds, now: number): number {
  return bounds.startAt === undefined ? now : Math.max(now, bounds.startAt - 1);
}
