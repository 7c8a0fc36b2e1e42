import { describe, expect, it } from 'vitest';
import { decideAdmission, OUT_OF_BOUNDS, WITHDRAWN } from '../../src/decisions/admission.js';
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
    outOfBounds: undefined,
    ...extra,
  });

// issue #20: what the lane decides at the instant, besides the overlap policy of spec §5.
describe('decideAdmission (issues #20, #22)', () => {
  it('starts nothing of a deleted scheduler, whatever triggered the run', () => {
    for (const trigger of ['cron', 'at', 'manual'] as const)
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
