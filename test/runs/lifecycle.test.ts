import { describe, expect, it } from 'vitest';
import {
  claimRun,
  EndReason,
  endRun,
  engineOutcome,
  failRun,
  isPending,
  promoteRun,
  queueRun,
  RunOutcome,
  releaseRun,
  skipMisfire,
  skipOf,
  skipRun,
  startRun,
  workflowOutcome,
} from '../../src/runs/index.js';
import type { ClaimedRun } from '../../src/runs/run.js';

// Pure: the run lifecycle needs no store (spec §5, §9a; decisions §4, §5).

const T0 = Date.parse('2026-06-01T08:00:00Z');

function claimed(overrides: Partial<Parameters<typeof claimRun>[0]> = {}): ClaimedRun {
  return claimRun({
    correlationId: 'run_1',
    tenant: 'acme',
    project: 'ops',
    name: 'audit',
    scheduledFor: T0,
    trigger: 'cron',
    coalescedUntil: null,
    claimedAt: T0 - 500,
    runAs: 'ada',
    logPath: '_vance/logs/scheduler/audit/20260601T080000Z-run_1.md',
    workerId: 'wrk_a',
    lockMode: 'full',
    ...overrides,
  });
}

describe('claimRun', () => {
  it('makes a claimed, pending run with no attempt, session, process or instants', () => {
    expect(claimed()).toEqual({
      correlationId: 'run_1',
      tenant: 'acme',
      project: 'ops',
      name: 'audit',
      scheduledFor: T0,
      trigger: 'cron',
      coalesced: false,
      coalescedUntil: null,
      claimedAt: T0 - 500,
      state: 'claimed',
      outcome: 'pending',
      reason: null,
      runAs: 'ada',
      sessionId: null,
      processId: null,
      logPath: '_vance/logs/scheduler/audit/20260601T080000Z-run_1.md',
      startedAt: null,
      endedAt: null,
      workerId: 'wrk_a',
      lockMode: 'full',
      attempt: 0,
      fencingToken: null,
      queuedAt: null,
      waitingBehind: null,
      foldedInto: null,
    });
  });

  it('coalesces when it absorbs later occurrences (decisions §4)', () => {
    const run = claimed({ coalescedUntil: T0 + 120_000 });
    expect(run.coalesced).toBe(true);
    expect(run.coalescedUntil).toBe(T0 + 120_000);
  });

  it('a misfire is skipped at its claim, with its reason and no end instant', () => {
    const run = skipMisfire(claimed(), 'misfire-threshold');
    expect(run).toMatchObject({ state: 'skipped', outcome: 'skipped_misfire', reason: 'misfire-threshold' });
    expect(run.endedAt).toBeNull();
  });
});

describe('startRun', () => {
  it('sets the session, the process and the start instant; the attempt comes from the start transaction', () => {
    const start = { sessionId: 'ses_1', processId: 'proc_1', at: T0 + 3 };
    const before = startRun(claimed(), start);
    expect(before).toMatchObject({ state: 'started', outcome: 'pending', startedAt: T0 + 3, attempt: 0 });
    const started = startRun(claimed(), start, { attempt: 1, fencingToken: 42 });
    expect(started).toMatchObject({ processId: 'proc_1', sessionId: 'ses_1', attempt: 1, fencingToken: 42 });
    expect(started.endedAt).toBeNull();
  });

  it('a workflow target starts with no process of its own', () => {
    const started = startRun(
      claimed(),
      { sessionId: null, processId: null, at: T0 },
      { attempt: 1, fencingToken: 7 },
    );
    expect(started.processId).toBeNull();
  });
});

describe('endRun', () => {
  const started = startRun(
    claimed(),
    { sessionId: 's', processId: 'p', at: T0 },
    { attempt: 1, fencingToken: 1 },
  );

  it('ends with the outcome, the reason and the instant; what the start set stays', () => {
    const ended = endRun(started, RunOutcome.COMPLETED, null, T0 + 1000);
    expect(ended).toMatchObject({ state: 'ended', outcome: 'completed', endedAt: T0 + 1000, startedAt: T0 });
    expect(ended.processId).toBe('p');
    expect(ended.workerId).toBe('wrk_a');
  });

  it('fails a run, and records the worker that ended it when given', () => {
    expect(failRun(started, EndReason.WORKER_LOST, T0 + 5)).toMatchObject({
      outcome: 'failed',
      reason: 'worker-lost',
      workerId: 'wrk_a',
    });
    expect(failRun(claimed({ workerId: null }), EndReason.SPAWN_FAILED, T0, 'wrk_b').workerId).toBe('wrk_b');
  });

  it('a released one-shot ends cancelled (spec §10a)', () => {
    expect(releaseRun(started, 'worker-lost', T0 + 2)).toMatchObject({
      outcome: 'cancelled',
      reason: 'worker-lost',
    });
  });
});

describe('the lane', () => {
  it('queues, promotes to another worker, and skips pending runs', () => {
    const queued = queueRun(claimed(), T0 + 5, 'run_active');
    expect(queued).toMatchObject({ state: 'queued', queuedAt: T0 + 5, waitingBehind: 'run_active' });
    // Queued again behind another run (issue #23): it has waited since its first queueing.
    expect(queueRun(queued, T0 + 7, 'run_next')).toMatchObject({
      queuedAt: T0 + 5,
      waitingBehind: 'run_next',
    });
    expect(promoteRun(queued, 'wrk_b')).toMatchObject({ state: 'queued', workerId: 'wrk_b' });
    const skipped = skipRun(
      queued,
      { outcome: RunOutcome.SKIPPED_OVERLAP, reason: EndReason.OVERLAP },
      T0 + 9,
    );
    expect(skipped).toMatchObject({
      state: 'skipped',
      outcome: 'skipped_overlap',
      reason: 'overlap',
      endedAt: T0 + 9,
    });
    expect(isPending(queued)).toBe(true);
    expect(isPending(skipped)).toBe(false);
  });

  it('maps each admission decision that skips a run to its outcome and reason (spec §5)', () => {
    expect(skipOf('skip')).toEqual({ outcome: 'skipped_overlap', reason: 'overlap' });
    expect(skipOf('consolidate')).toEqual({ outcome: 'skipped_overlap_queued', reason: 'overlap' });
    expect(skipOf('deleted')).toEqual({ outcome: 'skipped_deleted', reason: 'scheduler-deleted' });
    expect(skipOf('disabled')).toEqual({ outcome: 'skipped_disabled', reason: 'scheduler-disabled' });
    for (const decision of ['start', 'queue', 'cancel', 'yield', 'lost'] as const)
      expect(skipOf(decision)).toBeUndefined();
  });
});

describe('outcomes', () => {
  it('reads an engine status and a workflow run status as outcomes (spec §9a, §4.2)', () => {
    expect([engineOutcome('done'), engineOutcome('failed'), engineOutcome('stopped')]).toEqual([
      'completed',
      'failed',
      'cancelled',
    ]);
    expect([workflowOutcome('completed'), workflowOutcome('cancelled'), workflowOutcome('failed')]).toEqual([
      'completed',
      'cancelled',
      'failed',
    ]);
  });

  it('lists every outcome the store documents', () => {
    expect(Object.values(RunOutcome).sort()).toEqual(
      [
        'pending',
        'completed',
        'failed',
        'cancelled',
        'skipped_overlap',
        'skipped_overlap_queued',
        'skipped_misfire',
        'skipped_deleted',
        'skipped_disabled',
        'skipped_bounds',
        'skipped_budget',
        'refused',
      ].sort(),
    );
  });
});
