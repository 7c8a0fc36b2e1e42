import { BUDGET_WINDOW_MS, type BudgetRefusal, hasBudget, type RunBudget } from '../decisions/budget.js';
import type { Run } from '../runs/run.js';
import type { NewInboxItem } from '../store/inbox.js';
import { runBudget } from '../store/setting-cascades.js';
import { formatInstant } from '../time/instant.js';
import type { DispatchContext } from './dispatch-context.js';

/**
 * The run budget of a run's project (issue #22: `scheduler.budget.*`, project → `_tenant` →
 * operator), or undefined when it has none — what a lane request carries.
 *
 * @throws a store error.
 */
export async function budgetOf(
  ctx: Pick<DispatchContext, 'rt'>,
  run: { readonly tenant: string; readonly project: string },
): Promise<RunBudget | undefined> {
  const budget = await runBudget(ctx.rt.repos, run.tenant, run.project, ctx.rt.settings.budget);
  return hasBudget(budget) ? budget : undefined;
}

/**
 * The inbox item telling the `runAs` user of `run` that its project's budget refused it (issue
 * #22), for the lane to write once per window: its title names the user's project, the limit and
 * the hour (or day) of the clock the refusal falls in, so refusals in one window share one item.
 */
export function overBudgetNotice(run: Run, budget: RunBudget, at: number) {
  return (refusal: BudgetRefusal): NewInboxItem => {
    const windowMs = BUDGET_WINDOW_MS[refusal];
    const windowStart = formatInstant(Math.floor(at / windowMs) * windowMs);
    const hourly = refusal === 'runs-per-hour';
    const limit = hourly ? budget.runsPerHour : budget.runsPerDay;
    return {
      tenant: run.tenant,
      user: run.runAs,
      kind: 'budget-exceeded',
      title: `${run.project} reached its budget of ${limit} runs per ${hourly ? 'hour' : 'day'} (from ${windowStart})`,
      body: `The run of ${run.name} scheduled for ${formatInstant(run.scheduledFor)} did not start: project ${run.project} started ${limit} runs in the last ${hourly ? 'hour' : '24 hours'}, all its budget (scheduler.budget.${hourly ? 'runsPerHour' : 'runsPerDay'}). Runs over the budget are skipped (skipped_budget) until the window has room again.`,
      project: run.project,
      scheduler: run.name,
      correlationId: run.correlationId,
      logPath: run.logPath,
      createdAt: at,
    };
  };
}
