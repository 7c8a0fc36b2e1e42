import { MS_PER_DAY, MS_PER_HOUR } from '../time/calendar.js';

/**
 * A project's run budget (issue #22): at most `runsPerHour` runs started in any rolling hour and
 * `runsPerDay` in any rolling 24 hours; undefined for no limit.
 */
export interface RunBudget {
  readonly runsPerHour: number | undefined;
  readonly runsPerDay: number | undefined;
}

/** No budget: every run may start (what a project gets when nothing sets one). */
export const NO_BUDGET: RunBudget = { runsPerHour: undefined, runsPerDay: undefined };

/** Which window of a budget refuses a run: the rolling hour or the rolling day. */
export type BudgetRefusal = 'runs-per-hour' | 'runs-per-day';

/** The windows a budget counts over, milliseconds. */
export const BUDGET_WINDOW_MS: Readonly<Record<BudgetRefusal, number>> = {
  'runs-per-hour': MS_PER_HOUR,
  'runs-per-day': MS_PER_DAY,
};

/** Whether a budget limits anything. */
export function hasBudget(budget: RunBudget): boolean {
  return budget.runsPerHour !== undefined || budget.runsPerDay !== undefined;
}

/**
 * The budget's verdict on one more run of its project, pure: the window it would overspend, or
 * undefined when it may start. `startedInHour` and `startedInDay` are the runs of the project
 * that started in the rolling hour and day before the instant of the start (counted under the
 * project's lock, so several workers never overspend a window).
 */
export function budgetRefusal(
  budget: RunBudget,
  startedInHour: number,
  startedInDay: number,
): BudgetRefusal | undefined {
  if (budget.runsPerHour !== undefined && startedInHour >= budget.runsPerHour) return 'runs-per-hour';
  if (budget.runsPerDay !== undefined && startedInDay >= budget.runsPerDay) return 'runs-per-day';
  return undefined;
}
