import { describe, expect, it } from 'vitest';
import { fireStory, judged } from '../../src/contract/fire-story.js';
import type { RunDetail } from '../../src/contract/index.js';

/** A fired run as `GET …/runs/:id` answers it, requested and not judged yet. */
function fired(fields: Partial<RunDetail> = {}): RunDetail {
  return {
    correlationId: 'run_c',
    tenant: 'acme',
    project: 'ops',
    scheduler: 'hb',
    trigger: 'manual',
    scheduledFor: '2026-03-28T12:00:00.001Z',
    coalesced: false,
    coalescedUntil: null,
    claimedAt: '2026-03-28T12:00:00.001Z',
    state: 'queued',
    outcome: 'pending',
    reason: null,
    runAs: 'admin',
    sessionId: null,
    processId: null,
    startedAt: null,
    endedAt: null,
    workerId: null,
    attempt: 0,
    fencingToken: null,
    queuedAt: null,
    waitingBehind: null,
    foldedInto: null,
    folded: null,
    output: null,
    logPath: '_vance/logs/scheduler/hb/x.md',
    log: null,
    ...fields,
  };
}

// issue #23: `ursa fire` says exactly what happened, a fold included (it printed "fired" for all).
describe('what ursa fire says of its run', () => {
  it('names each judgement of the lane, and the run it waits behind or was folded into', () => {
    const cases: [Partial<RunDetail>, boolean, string][] = [
      [{}, false, 'fired hb: run_c is requested; no worker has taken it yet'],
      [{ state: 'running', processId: 'proc_1' }, true, 'fired hb: run_c started (process proc_1)'],
      [{ state: 'blocked', processId: 'proc_1' }, true, 'fired hb: run_c started (process proc_1)'],
      [{ state: 'ended', outcome: 'completed' }, true, 'fired hb: run_c ran and ended completed'],
      [
        { state: 'ended', outcome: 'failed', reason: 'exit code 1' },
        true,
        'fired hb: run_c ran and ended failed (exit code 1)',
      ],
      [
        { state: 'queued', queuedAt: '2026-03-28T12:00:00.002Z', waitingBehind: 'run_a' },
        true,
        'fired hb: run_c waits behind run_a, the active run, and starts when that one ends',
      ],
      [
        { state: 'skipped', outcome: 'skipped_overlap_queued', foldedInto: 'run_b' },
        true,
        'fired hb: folded into run_b, which already waits for its turn; this fire adds no run',
      ],
      [
        { state: 'skipped', outcome: 'skipped_overlap', reason: 'overlap' },
        true,
        'fired hb: run_c did not start: a run is still active and the overlap policy is skip',
      ],
      [
        { state: 'skipped', outcome: 'skipped_budget', reason: 'runs-per-hour' },
        true,
        "fired hb: run_c did not start: the project's run budget has no room left",
      ],
    ];
    for (const [fields, isJudged, said] of cases) {
      expect([judged(fired(fields)), fireStory('hb', fired(fields))]).toEqual([isJudged, said]);
    }
  });
});
