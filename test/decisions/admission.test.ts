import { describe, expect, it } from 'vitest';
import { decideAdmission, OUT_OF_BOUNDS, OVER_BUDGET, WITHDRAWN } from '../../src/decisions/admission.js';
import { budgetRefusal, NO_BUDGET } from '../../src/decisions/budget.js';
import { decideOverlap } from '../../src/decisions/overlap.js';
import { timingOf } from '../../src/runtime/registrar.js';
import { parseSchedulerDocument } from '../../src/scheduler/document.js';
import { isDisabledTiming } from '../../src/store/schedules.js';

const free = { policy: 'skip', oneShot: false, active: false, waiting: false } as const;
const at = (extra: Partial<Parameters<typeof decideAdmission>[0]>) =>
  decideAdmission({
    ...free,
    trigger: 'cron',
    standing: 'present',
    earlierManualFire: false,
    earlierBackfill: false,
    outOfBounds: undefined,
    overBudget: undefined,
    ...extra,
  });

// issue #20: what the lane decides at the instant, besides the overlap policy of spec §5.
describe('decideAdmission (issues #20, #22)', () => {
  it('starts nothing of a deleted scheduler, whatever triggered the run', () => {
    for (const trigger of ['cron', 'at', 'manual', 'backfill'] as const)
      expect(at({ trigger, standing: 'deleted', earlierManualFire: true })).toBe('deleted');
  });

  it('starts no scheduled run of a disabled scheduler, but a manual fire, which bypasses the schedule', () => {
    expect(at({ trigger: 'cron', standing: 'disabled' })).toBe('disabled');
    expect(at({ trigger: 'cron', standing: 'disabled', active: true })).toBe('disabled');
    expect(at({ trigger: 'at', standing: 'disabled' })).toBe('disabled');
    expect(at({ trigger: 'manual', standing: 'disabled' })).toBe('start');
  });

  it('has a scheduled run yield to an earlier manual fire, before the overlap policy decides', () => {
    expect(at({ earlierManualFire: true })).toBe('yield');
    expect(at({ earlierManualFire: true, active: true })).toBe('yield');
    expect(at({ trigger: 'manual', earlierManualFire: true })).toBe('start');
  });

  it('is the overlap decision otherwise (spec §5)', () => {
    expect(at({})).toBe('start');
    expect(at({ active: true })).toBe('skip');
    expect(at({ policy: 'queue', active: true })).toBe('queue');
    expect(at({ oneShot: true, active: true })).toBe('start');
  });

  // issue #22: one admission order for every start — bounds, then pause, then the overlap policy.
  it('refuses in the one admission order: deleted, then bounds, then pause, then overlap', () => {
    const refusals = ['before-start', 'after-end', 'max-runs'] as const;
    for (const trigger of ['cron', 'manual'] as const) {
      for (const outOfBounds of refusals) {
        expect(at({ trigger, outOfBounds, standing: 'deleted' })).toBe('deleted');
        // Bounds come before the pause and the overlap policy, whatever they would say.
        expect(at({ trigger, outOfBounds, standing: 'disabled', active: true })).toBe(outOfBounds);
        expect(at({ trigger, outOfBounds, policy: 'queue', active: true, waiting: true })).toBe(outOfBounds);
      }
    }
    // The pause comes before the overlap policy, for a scheduled run.
    expect(at({ standing: 'disabled', policy: 'cancelPrevious', active: true })).toBe('disabled');
    expect(at({ trigger: 'manual', standing: 'disabled', active: true })).toBe('skip');
  });

  // issue #22: every combination of refusals gives the first in the order deleted → (a scheduled
  // run's yield) → (a backfill run's turn) → bounds → pause → budget → overlap.
  it('decides every combination of refusals by the first in the admission order', () => {
    let combinations = 0;
    for (const trigger of ['cron', 'at', 'manual', 'backfill'] as const)
      for (const standing of ['present', 'deleted', 'disabled'] as const)
        for (const earlierManualFire of [false, true])
          for (const earlierBackfill of [false, true])
            for (const outOfBounds of [undefined, 'before-start', 'after-end', 'max-runs'] as const)
              for (const overBudget of [undefined, 'runs-per-hour', 'runs-per-day'] as const)
                for (const policy of ['skip', 'queue', 'cancelPrevious'] as const)
                  for (const active of [false, true])
                    for (const waiting of [false, true]) {
                      const s = {
                        trigger,
                        standing,
                        earlierManualFire,
                        earlierBackfill,
                        outOfBounds,
                        overBudget,
                        policy,
                        active,
                        waiting,
                      };
                      const scheduled = trigger !== 'manual';
                      const backfill = trigger === 'backfill';
                      const admitted = backfill
                        ? 'start'
                        : decideOverlap({ policy, oneShot: false, active, waiting });
                      const expected =
                        standing === 'deleted'
                          ? 'deleted'
                          : scheduled && earlierManualFire
                            ? 'yield'
                            : backfill && (active || waiting || earlierBackfill)
                              ? 'hold'
                              : (outOfBounds ??
                                (scheduled && standing === 'disabled'
                                  ? 'disabled'
                                  : overBudget !== undefined && backfill
                                    ? 'hold'
                                    : (overBudget ?? admitted)));
                      expect(at(s), JSON.stringify(s)).toBe(expected);
                      combinations++;
                    }
    expect(combinations).toBe(4 * 3 * 2 * 2 * 4 * 3 * 3 * 2 * 2);
  });

  // issue #22 backfill: a queue of its own in the lane, oldest first, one after another.
  it("holds a backfill run until its lane is free and it is its queue's oldest, whatever the policy", () => {
    for (const policy of ['skip', 'queue', 'cancelPrevious'] as const) {
      expect(at({ trigger: 'backfill', policy, active: true })).toBe('hold');
      expect(at({ trigger: 'backfill', policy, waiting: true })).toBe('hold');
      expect(at({ trigger: 'backfill', policy, earlierBackfill: true })).toBe('hold');
      expect(at({ trigger: 'backfill', policy })).toBe('start');
    }
    // Its turn come, it meets the same refusals as any run; a pause withdraws it.
    expect(at({ trigger: 'backfill', standing: 'disabled' })).toBe('disabled');
    // Over the budget, it waits for room: a backfill paces itself within the budget.
    expect(at({ trigger: 'backfill', overBudget: 'runs-per-hour' })).toBe('hold');
    expect(at({ trigger: 'backfill', outOfBounds: 'before-start' })).toBe('before-start');
    // A backfill queue is no run of the lane for a scheduled run: only its active run is.
    expect(at({ earlierBackfill: true })).toBe('start');
  });

  it('refuses a run over budget after the pause and before the overlap policy, recorded skipped_budget', () => {
    expect(at({ overBudget: 'runs-per-hour', active: true, policy: 'queue' })).toBe('runs-per-hour');
    expect(at({ overBudget: 'runs-per-day', standing: 'disabled' })).toBe('disabled');
    expect(at({ trigger: 'manual', overBudget: 'runs-per-day' })).toBe('runs-per-day');
    expect(at({ overBudget: 'runs-per-hour', outOfBounds: 'after-end' })).toBe('after-end');
    expect(OVER_BUDGET).toEqual({
      'runs-per-hour': { outcome: 'skipped_budget', reason: 'runs-per-hour' },
      'runs-per-day': { outcome: 'skipped_budget', reason: 'runs-per-day' },
    });
  });

  it('lets a run start while both rolling windows have room (issue #22 budget)', () => {
    const budget = { runsPerHour: 3, runsPerDay: 10 };
    expect(budgetRefusal(budget, 2, 9)).toBeUndefined();
    expect(budgetRefusal(budget, 3, 3)).toBe('runs-per-hour');
    expect(budgetRefusal(budget, 0, 10)).toBe('runs-per-day');
    expect(budgetRefusal(budget, 5, 12)).toBe('runs-per-hour');
    expect(budgetRefusal(NO_BUDGET, 1_000_000, 1_000_000)).toBeUndefined();
    expect(budgetRefusal({ runsPerHour: undefined, runsPerDay: 1 }, 50, 0)).toBeUndefined();
  });

  it('has a scheduled run yield to an earlier manual fire before any refusal, so it is judged after it', () => {
    expect(at({ earlierManualFire: true, outOfBounds: 'max-runs' })).toBe('yield');
    expect(at({ earlierManualFire: true, standing: 'disabled' })).toBe('yield');
    expect(at({ earlierManualFire: true, standing: 'deleted' })).toBe('deleted');
    expect(at({ trigger: 'manual', earlierManualFire: true, outOfBounds: 'after-end' })).toBe('after-end');
  });

  it('records a run its bounds refused as skipped_bounds, with the bound as its reason', () => {
    expect(OUT_OF_BOUNDS).toEqual({
      'before-start': { outcome: 'skipped_bounds', reason: 'before-start' },
      'after-end': { outcome: 'skipped_bounds', reason: 'after-end' },
      'max-runs': { outcome: 'skipped_bounds', reason: 'max-runs' },
    });
  });

  it('records withdrawn runs with an outcome and a reason users read', () => {
    expect(WITHDRAWN).toEqual({
      deleted: { outcome: 'skipped_deleted', reason: 'scheduler-deleted' },
      disabled: { outcome: 'skipped_disabled', reason: 'scheduler-disabled' },
    });
  });

  it('reads a disabled scheduler from the timing a refresh stores', () => {
    const timing = (enabled: string) =>
      timingOf(
        parseSchedulerDocument(`description: d\ncron: "0 * * * * *"\nrecipe: noop\n${enabled}`, {
          name: 'job',
          path: '_vance/scheduler/job.yaml',
        }),
      );
    expect(isDisabledTiming(timing('enabled: false\n'))).toBe(true);
    expect(isDisabledTiming(timing('enabled: true\n'))).toBe(false);
    expect(isDisabledTiming(timing(''))).toBe(false);
    expect(isDisabledTiming(null)).toBe(false);
  });
});
