import { describe, expect, it } from 'vitest';
import { decideAdmission, WITHDRAWN } from '../../src/decisions/admission.js';
import { timingOf } from '../../src/runtime/registrar.js';
import { parseSchedulerDocument } from '../../src/scheduler/document.js';
import { isDisabledTiming } from '../../src/store/schedules.js';

const free = { policy: 'skip', oneShot: false, active: false, waiting: false } as const;
const at = (extra: Partial<Parameters<typeof decideAdmission>[0]>) =>
  decideAdmission({ ...free, trigger: 'cron', standing: 'present', earlierManualFire: false, ...extra });

// issue #20: what the lane decides at the instant, besides the overlap policy of spec §5.
describe('decideAdmission (issue #20)', () => {
  it('starts nothing of a deleted scheduler, whatever triggered the run', () => {
    for (const trigger of ['cron', 'at', 'manual'] as const)
      expect(at({ trigger, standing: 'deleted', earlierManualFire: true })).toBe('deleted');
  });

  it('starts no scheduled run of a disabled scheduler, but a manual fire, which bypasses the schedule', () => {
    expect(at({ trigger: 'cron', standing: 'disabled' })).toBe('disabled');
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
