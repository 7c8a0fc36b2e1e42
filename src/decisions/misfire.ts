import { previousFireTime } from '../cron/index.js';
import type { MisfirePolicy } from '../scheduler/definition.js';
import { type Advance, type ScheduleTiming, scheduleAdvance } from './advance.js';

/** A scheduler's misfire settings (decisions §4). */
export interface MisfireSettings extends ScheduleTiming {
  readonly misfire: MisfirePolicy;
  /** `catchUpWindow` in milliseconds, if set. */
  readonly catchUpWindowMs: number | undefined;
}

/** Why a due occurrence is not run. */
export type SkipReason = 'misfire-threshold' | 'catch-up-window';

/**
 * The older occurrences of a backlog that `misfire: skip` does not run while its newest one runs
 * (decisions §4). Instants are UTC epoch ms; both are occurrences of the schedule.
 */
export interface SkippedOlder {
  /** The oldest skipped occurrence: the claim's due instant. */
  readonly from: number;
  /** The newest skipped occurrence: the one just before the newest missed one (equal to `from` when one was skipped). */
  readonly until: number;
}

/**
 * What to do with a due occurrence (decisions §4). Either way the schedule advances (`advance`):
 * - `fire`: run it once (absorbing any later occurrences already due);
 * - `skip`: record it (and what it absorbed) as skipped, run nothing;
 * - `skip-older`: record `skipped` as skipped and run the newest missed occurrence,
 *   `advance.newestDue`, on its own (`misfire: skip`, the newest within the threshold).
 */
export type DueDecision =
  | { readonly action: 'fire'; readonly advance: Advance }
  | { readonly action: 'skip'; readonly advance: Advance; readonly reason: SkipReason }
  | {
      readonly action: 'skip-older';
      readonly advance: Advance;
      readonly reason: 'misfire-threshold';
      readonly skipped: SkippedOlder;
    };

/**
 * Decides a due occurrence `dueAt` at `now` (UTC epoch ms), decisions §4. For a backlog, the
 * newest missed occurrence decides:
 * - `misfire: skip`: an occurrence older than `misfireThresholdMs` is not run (spec §3). When the
 *   due one is, but the newest missed one is within the threshold, the older ones are skipped and
 *   the newest runs; when the newest is older too, all are skipped. A due occurrence within the
 *   threshold runs once, absorbing the later ones (all of them within it too);
 * - `misfire: once` with `catchUpWindow`: a backlog whose newest missed occurrence is older than
 *   the window is not run;
 * - otherwise it runs once, absorbing any later occurrences already due.
 * One-shots (`at:`) always run, however late (spec §10a). Costs at most two cron steps beyond
 * `scheduleAdvance`, never a walk over the backlog.
 */
export function decideDue(
  settings: MisfireSettings,
  dueAt: number,
  now: number,
  misfireThresholdMs: number,
): DueDecision {
  const advance = scheduleAdvance(settings, dueAt, now);
  const { trigger } = settings;
  if (trigger.kind === 'cron') {
    if (settings.misfire === 'skip' && now - dueAt > misfireThresholdMs) {
      const { newestDue } = advance;
      if (newestDue > dueAt && now - newestDue <= misfireThresholdMs) {
        const before = previousFireTime(trigger.cron, settings.zone, newestDue);
        const until = before === null ? dueAt : Math.max(dueAt, before);
        return {
          action: 'skip-older',
          advance,
          reason: 'misfire-threshold',
          skipped: { from: dueAt, until },
        };
      }
      return { action: 'skip', advance, reason: 'misfire-threshold' };
    }
    if (
      settings.misfire === 'once' &&
      settings.catchUpWindowMs !== undefined &&
      now - advance.newestDue > settings.catchUpWindowMs
    ) {
      return { action: 'skip', advance, reason: 'catch-up-window' };
    }
  }
  return { action: 'fire', advance };
}
