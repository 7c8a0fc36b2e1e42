import { afterEach, describe, expect, it } from 'vitest';
import { claimRun, type Run } from '../../src/runs/index.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const at = (iso: string) => Date.parse(iso);

/** A run of scheduler `job` as the runs table holds it, claimed at its occurrence. */
function run(correlationId: string, scheduledFor: string, fields: Partial<Run> = {}): Run {
  const claimed = claimRun({
    correlationId,
    tenant: 'acme',
    project: 'ops',
    name: 'job',
    scheduledFor: at(scheduledFor),
    trigger: 'cron',
    coalescedUntil: null,
    claimedAt: at(scheduledFor),
    runAs: 'alice',
    logPath: `_vance/logs/scheduler/job/${correlationId}.md`,
    workerId: null,
    lockMode: 'full',
  });
  return { ...claimed, ...fields } as Run;
}

const folded = (correlationId: string, scheduledFor: string, endedAt: string, trigger: Run['trigger']) =>
  run(correlationId, scheduledFor, {
    trigger,
    state: 'skipped',
    outcome: 'skipped_overlap_queued',
    reason: 'overlap',
    endedAt: at(endedAt),
    foldedInto: 'run_wait',
  });

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

// Issue #23 (a newcomer's finding): a run log's FOLDED lines, stamped with the instant each request
// was folded, were listed by occurrence, so a fire for an earlier instant folded later came first.
describe.each(DIALECTS)('the runs folded into a waiting run, on %s (issue #23)', (dialect) => {
  it('are listed in the order they were folded, with their count', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const { runs } = t.rt.repos;
    await runs.insert(
      run('run_wait', '2026-06-01T08:00:20Z', { state: 'queued', queuedAt: at('2026-06-01T08:00:20Z') }),
    );
    await runs.insert(folded('run_tick', '2026-06-01T08:00:30Z', '2026-06-01T08:00:30Z', 'cron'));
    // A manual fire whose occurrence is older than the tick, folded after it.
    await runs.insert(folded('run_fire', '2026-06-01T08:00:25Z', '2026-06-01T08:00:31Z', 'manual'));
    await runs.insert(folded('run_tick2', '2026-06-01T08:00:40Z', '2026-06-01T08:00:40Z', 'cron'));
    const found = (await runs.folded(['run_wait', 'run_tick'])).get('run_wait');
    expect(found?.count).toBe(3);
    expect(found?.first.map((f) => [f.correlationId, f.trigger])).toEqual([
      ['run_tick', 'cron'],
      ['run_fire', 'manual'],
      ['run_tick2', 'cron'],
    ]);
    expect((await runs.folded(['run_tick'])).size).toBe(0);
  });
});
