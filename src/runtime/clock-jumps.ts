import { performance } from 'node:perf_hooks';
import { parseCron, timeZone } from '../cron/index.js';
import type { ScheduleTiming } from '../decisions/advance.js';
import { type ClockReading, clockJump, replanAfterJumpBack } from '../decisions/clock-jump.js';
import type { SchedulerKey } from '../store/schedules.js';
import { humanDuration } from '../time/duration.js';
import type { Runtime } from './context.js';

/** The default of `WorkerOptions.clockJumpThresholdMs`: a jump of the wall clock beyond this, milliseconds, is one. */
export const DEFAULT_CLOCK_JUMP_THRESHOLD_MS = 5000;

/** States read per page of a replan. */
const PAGE = 1000;

/**
 * The cron schedule a stored timing (`timingOf` in registrar.ts: `{"cron":…,"zone":…,"enabled":…,…bounds}`)
 * was computed from; undefined for a one-shot's timing, a legacy or unreadable one.
 */
export function cronTiming(timing: string | null): ScheduleTiming | undefined {
  if (timing === null) return undefined;
  try {
    const { cron, zone, startAt, endAt, maxRuns } = JSON.parse(timing) as Record<string, unknown>;
    if (typeof cron !== 'string' || typeof zone !== 'string') return undefined;
    const instant = (value: unknown) => (typeof value === 'number' ? value : undefined);
    return {
      trigger: { kind: 'cron', expression: cron, cron: parseCron(cron) },
      zone: timeZone(zone),
      bounds: { startAt: instant(startAt), endAt: instant(endAt), maxRuns: instant(maxRuns) },
    };
  } catch {
    return undefined;
  }
}

/** What {@link replanFrom} did. */
export interface ReplanResult {
  /** Cron schedules that wait for an occurrence after the new now. */
  readonly looked: number;
  /** Of those, the ones moved to an earlier occurrence. */
  readonly replanned: number;
}

/**
 * After the wall clock was set back to `now` (UTC ms): every cron schedule waiting further ahead
 * than it should gets the occurrence {@link replanAfterJumpBack} gives, by a compare-and-swap
 * (a claim in between wins); other workers are woken when any moved (issue #20).
 *
 * @throws the store's errors; what was moved stays moved, and a second pass moves the rest.
 */
export async function replanFrom(rt: Runtime, now: number): Promise<ReplanResult> {
  const { repos, clock } = rt;
  const schedules = new Map<string, ScheduleTiming | undefined>();
  let looked = 0;
  let replanned = 0;
  let after: SchedulerKey | undefined;
  for (;;) {
    const page = await repos.schedules.waitingAfter(now, after, PAGE);
    for (const state of page) {
      const key = state.timing ?? '';
      if (!schedules.has(key)) schedules.set(key, cronTiming(state.timing));
      const schedule = schedules.get(key);
      if (schedule === undefined) continue;
      looked++;
      if (replanAfterJumpBack(state, schedule, now) === undefined) continue;
      // The last claim may have absorbed later occurrences (coalesced): they were served too.
      const last =
        state.lastScheduledAt === null
          ? undefined
          : await repos.runs.forOccurrence(state, state.lastScheduledAt);
      const next = replanAfterJumpBack(
        { ...state, lastCoalescedUntil: last?.coalesced ? last.coalescedUntil : null },
        schedule,
        now,
      );
      const expected = { nextRunAt: state.nextRunAt as number, lastScheduledAt: state.lastScheduledAt };
      if (next !== undefined && (await repos.schedules.replan(state, expected, next, clock.now())))
        replanned++;
    }
    if (page.length < PAGE) break;
    after = page.at(-1);
  }
  if (replanned > 0) await repos.store.notifyChange();
  return { looked, replanned };
}

/**
 * The worker loop's watch on the wall clock (issue #20): each pass reads the injected clock and
 * the monotonic clock, and a jump between two passes beyond `thresholdMs` is logged at warn with
 * its size and direction. After a jump back, the schedules are replanned from the new now
 * ({@link replanFrom}), so that none waits for an occurrence computed before the jump; a replan
 * the store fails is tried again at the next pass.
 */
export class ClockWatch {
  #last: ClockReading | undefined;
  #replanPending = false;

  constructor(
    private readonly rt: Runtime,
    private readonly thresholdMs = DEFAULT_CLOCK_JUMP_THRESHOLD_MS,
    private readonly monotonic: () => number = () => performance.now(),
  ) {}

  /**
   * One look, at the start of a pass.
   *
   * @throws the store's errors of a replan (it stays pending for the next look).
   */
  async check(): Promise<void> {
    const { clock, log } = this.rt;
    const current = { wall: clock.now(), monotonic: this.monotonic() };
    const jump = this.#last === undefined ? null : clockJump(this.#last, current, this.thresholdMs);
    this.#last = current;
    if (jump !== null) {
      const direction = jump < 0 ? 'back' : 'forward';
      const by = humanDuration(jump);
      log.warn(
        { jumpMs: Math.abs(jump), direction, thresholdMs: this.thresholdMs },
        jump < 0
          ? `the wall clock was set back ${by}: next runs are recomputed from the new time; nothing already run runs again`
          : `the wall clock jumped forward ${by}: missed occurrences run or are skipped by each scheduler's misfire policy`,
      );
      if (jump < 0) this.#replanPending = true;
    }
    if (!this.#replanPending) return;
    const result = await replanFrom(this.rt, current.wall);
    this.#replanPending = false;
    log.info(result, 'next runs recomputed after the wall clock was set back');
  }
}
