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

/** What to do with a due occurrence: run it, or record it as skipped. Either way the schedule advances. */
export type DueDecision =
  | { readonly action: 'fire'; readonly advance: Advance }
  | { readonly action: 'skip'; readonly advance: Advance; readonly reason: SkipReason };

/**
 * Decides a due occurrence `dueAt` at `now` (UTC epoch ms), decisions §4:
 * - `misfire: skip`: a due instant older than `misfireThresholdMs` is not run (spec §3);
 * - `misfire: once` with `catchUpWindow`: a backlog whose newest missed occurrence is older than
 *   the window is not run;
 * - otherwise it runs once, absorbing any later occurrences already due.
 * One-shots (`at:`) always run, however late (spec §10a).
 */
export function decideDue(
  settings: MisfireSettings,
  dueAt: number,
  now: number,
  misfireThresholdMs: number,
): DueDecision {
  const advance = scheduleAdvance(settings, dueAt, now);
  if (settings.trigger.kind === 'cron') {
    if (settings.misfire === 'skip' && now - dueAt > misfireThresholdMs) {
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
