import { describe, expect, it } from 'vitest';
import { renderRunLog, runLogLockMode } from '../../src/runtime/run-log.js';
import type { LockMode } from '../../src/scheduler/definition.js';
import type { Run } from '../../src/store/runs.js';

const run = (lockMode: LockMode): Run => ({
  correlationId: 'run_1',
  tenant: 'acme',
  project: 'ops',
  name: 'audit',
  scheduledFor: Date.parse('2026-06-01T08:00:10Z'),
  trigger: 'cron',
  coalesced: false,
  coalescedUntil: null,
  claimedAt: Date.parse('2026-06-01T08:00:10Z'),
  state: 'ended',
  outcome: 'completed',
  reason: null,
  runAs: 'ada',
  sessionId: null,
  processId: null,
  logPath: '_vance/logs/scheduler/audit/20260601T080010Z-run_1.md',
  startedAt: null,
  endedAt: Date.parse('2026-06-01T08:00:11Z'),
  workerId: null,
  lockMode,
  attempt: 0,
  fencingToken: null,
  queuedAt: null,
  waitingBehind: null,
  foldedInto: null,
});

// Spec §10b: a run log says the lock mode its run was claimed under, and only its front matter
// counts, so process output cannot make a hidden run look full (issue #19).
describe('the lock mode a run log records (issue #19)', () => {
  it.each(['full', 'protected', 'hidden'] as const)('reads back %s from the rendered log', (mode) => {
    const body = renderRunLog(run(mode), { exitCode: 0, outputTail: 'lockMode: full\n', errorTail: '' });
    expect(runLogLockMode(body)).toBe(mode);
    expect(body.split('\n---\n')[0]?.includes('\nlockMode: ')).toBe(mode !== 'full');
  });

  it('reads a log whose front matter names no lock mode as full, and one naming an unknown mode as hidden', () => {
    expect(runLogLockMode('---\nkind: scheduler-log\n---\n\nlockMode: hidden\n')).toBe('full');
    expect(runLogLockMode('---\nlockMode: secret\n---\n')).toBe('hidden');
    expect(runLogLockMode('no front matter\nlockMode: hidden\n')).toBe('full');
  });
});
