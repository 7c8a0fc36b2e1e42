import { firstRunAt, type ScheduleTiming } from './advance.js';

/** The two clocks read at one instant: the wall clock (UTC epoch ms) and a monotonic clock (ms, any origin). */
export interface ClockReading {
  readonly wall: number;
  readonly monotonic: number;
}

/**
 * How far the wall clock jumped between two readings, milliseconds: the wall clock's advance less
 * the monotonic clock's, positive when it jumped forward, negative when it was set back; null when
 * the difference is within `thresholdMs` (a slewing clock, rounding). A process that stalled moves
 * both clocks alike, so a stall is no jump.
 */
export function clockJump(previous: ClockReading, current: ClockReading, thresholdMs: number): number | null {
  const jump = current.wall - previous.wall - (current.monotonic - previous.monotonic);
  return Math.abs(jump) > thresholdMs ? jump : null;
}

/** What a replan needs of a schedule's persisted state (decisions §4). Instants are UTC epoch ms. */
export interface PlannedState {
  /** The occurrence the schedule waits for; null when it waits for none (disabled, a spent one-shot). */
  readonly nextRunAt: number | null;
  /** The last occurrence it claimed. */
  readonly lastScheduledAt: number | null;
  /**
   * The newest occurrence that claim absorbed, when it was coalesced (its run's `coalescedUntil`):
   * served as well, so never run again either.
   */
  readonly lastCoalescedUntil?: number | null;
}

/**
 * The occurrence a cron schedule waits for after the wall clock was set back to `now` (UTC ms),
 * when the one it waits for, computed before the jump, lies further ahead than it should: the
 * first occurrence after `now` — but never one at or before the last occurrence it claimed (or
 * absorbed into that claim), so nothing already claimed runs again. Undefined when `nextRunAt`
 * stays: it is not further ahead than that (or is due), the schedule waits for nothing, or it is a
 * one-shot (its instant is fixed). Pure: the same state, expression and instant give the same answer.
 */
export function replanAfterJumpBack(
  state: PlannedState,
  schedule: ScheduleTiming,
  now: number,
): number | undefined {
  if (state.nextRunAt === null || schedule.trigger.kind !== 'cron') return undefined;
  const served = Math.max(
    state.lastScheduledAt ?? Number.NEGATIVE_INFINITY,
    state.lastCoalescedUntil ?? Number.NEGATIVE_INFINITY,
  );
  const next = firstRunAt(schedule, Math.max(now, served));
  return next !== null && next < state.nextRunAt ? next : undefined;
}
