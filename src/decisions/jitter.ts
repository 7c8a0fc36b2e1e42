import { nextFireTime } from '../cron/index.js';
import { firstRunAt, type ScheduleTiming } from './advance.js';
import { UNBOUNDED, withinEnd } from './bounds.js';

/** Which scheduler a jitter offset is for: its identity where it fires. */
export interface JitterIdentity {
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
}

/**
 * A scheduler's jitter offset (issue #22), milliseconds in [0, `jitterMs`), whole seconds when
 * `jitterMs` is two seconds or more: the same for every occurrence of the scheduler in one project,
 * and on every worker and preview, since it is a hash (32-bit FNV-1a, which needs nothing of Node
 * or the browser) of its tenant, project and name. A `_tenant` scheduler gets a different offset
 * in each project, which spreads their runs.
 */
export function jitterOffset(identity: JitterIdentity, jitterMs: number): number {
  let hash = 0x811c9dc5;
  for (const ch of `${identity.tenant}\u0000${identity.project}\u0000${identity.name}`) {
    hash ^= ch.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  // Whole seconds (cron's own grain) once the bound holds two, so previews read plainly; below
  // that, milliseconds (a bound of 1.5 s in whole seconds would leave every offset at 0).
  const grain = jitterMs >= 2000 ? 1000 : 1;
  return Math.floor((hash / 2 ** 32) * Math.floor(jitterMs / grain)) * grain;
}

/**
 * The instant the run of the occurrence `scheduledFor` (UTC ms) fires at, with a jitter offset
 * `offsetMs` ({@link jitterOffset}): `scheduledFor + offsetMs`, always before the schedule's next
 * occurrence — an offset as long as the interval or longer wraps within it (the remainder), so
 * schedulers whose jitter exceeds their interval still spread over it rather than all firing just
 * before the next occurrence. The occurrence itself (`scheduledFor`) stays the run's identity. A
 * one-shot has no jitter.
 */
export function jitteredFireTime(schedule: ScheduleTiming, scheduledFor: number, offsetMs: number): number {
  const { trigger } = schedule;
  if (trigger.kind !== 'cron' || offsetMs <= 0) return scheduledFor;
  const next = nextFireTime(trigger.cron, schedule.zone, scheduledFor);
  return next === null ? scheduledFor + offsetMs : scheduledFor + (offsetMs % (next - scheduledFor));
}

/** One coming fire of a scheduler: the occurrence it serves and the instant it starts at (UTC ms). */
export interface UpcomingFire {
  readonly occurrence: number;
  readonly firesAt: number;
}

/**
 * A scheduler's next `count` fires after `from` (UTC ms), as a preview shows them (`ursa next
 * --scheduler`, the editor): the occurrences its bounds let it wait for (the first as
 * {@link firstRunAt} finds it, none after `endAt`), at most `runsLeft` of them (what `maxRuns`
 * leaves; unlimited when undefined), each with the instant its jitter delays it to. A one-shot's
 * one fire is its `at:` instant.
 */
export function upcomingFires(
  schedule: ScheduleTiming & { readonly jitterMs?: number | undefined },
  identity: JitterIdentity,
  from: number,
  count: number,
  runsLeft?: number,
): UpcomingFire[] {
  const limit = Math.min(count, runsLeft ?? count);
  const offset = schedule.jitterMs === undefined ? 0 : jitterOffset(identity, schedule.jitterMs);
  const fires: UpcomingFire[] = [];
  const { trigger } = schedule;
  for (let next = firstRunAt(schedule, from); next !== null && fires.length < limit; ) {
    fires.push({ occurrence: next, firesAt: jitteredFireTime(schedule, next, offset) });
    next =
      trigger.kind === 'cron'
        ? withinEnd(schedule.bounds ?? UNBOUNDED, nextFireTime(trigger.cron, schedule.zone, next))
        : null;
  }
  return fires;
}
