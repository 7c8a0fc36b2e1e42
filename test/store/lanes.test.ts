import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/dialects.js';
import { claimedRunRow } from '../support/runs.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const key = { tenant: 'acme', project: 'ops', name: 'nightly' };
const DUE = Date.parse('2026-06-01T08:00:00Z');

// Issue #20, #21: no engine is entered for a recipe run without its process row. A run whose
// admission found its scheduler withdrawn prepares no process; if the scheduler was re-enabled
// before the lane's transaction, the lane decides `start`, and must refuse it rather than start
// a run whose process does not exist.
describe.each(DIALECTS)('a lane on %s', (dialect) => {
  it('refuses to start a recipe run without its process row, and moves nothing', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const { schedules, lanes, runs, processes } = t.rt.repos;
    await schedules.upsert(
      { ...key, source: 'project', documentVersion: 1, nextRunAt: DUE, lastScheduledAt: null, timing: null },
      DUE,
    );
    const swap = { expectedNextRunAt: DUE, expectedLastScheduledAt: null, nextRunAt: DUE + 60_000, now: DUE };
    expect(await schedules.claim(key, swap, claimedRunRow(key, 'run_a', DUE))).toBe(true);

    const admitted = lanes.admit({
      key,
      correlationId: 'run_a',
      workerId: 'wrk_test',
      policy: 'skip',
      oneShot: false,
      trigger: 'cron',
      scheduledFor: DUE,
      start: { sessionId: 'ses_1', processId: 'proc_1', at: DUE },
      opening: undefined,
    });

    await expect(admitted).rejects.toThrow('run run_a would start without its process row');
    expect(await runs.get('run_a')).toMatchObject({
      state: 'claimed',
      attempt: 0,
      fencingToken: null,
      processId: null,
      startedAt: null,
    });
    expect(await processes.get('proc_1')).toBeUndefined();
  });
});
