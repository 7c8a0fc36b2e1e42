import { describe, expect, it } from 'vitest';
import type { Run } from '../../src/runs/run.js';
import { runSpan, runTraceIds, tickSpan, traceparentOf } from '../../src/runs/trace.js';

// Issue #26 item 3: a run's span as data, the same in every process that builds it.

const RUN = {
  correlationId: 'run_6f1c2a4e-0b7d-4c1e-9f3a-2d5e8b7c6a10',
  tenant: 'acme',
  project: 'ops',
  name: 'job',
  scheduledFor: Date.parse('2026-06-01T08:00:10Z'),
  trigger: 'cron',
  coalesced: false,
  coalescedUntil: null,
  claimedAt: Date.parse('2026-06-01T08:00:09.900Z'),
  runAs: 'alice',
  logPath: 'log',
  workerId: 'wrk_a',
  lockMode: 'full',
  attempt: 0,
  fencingToken: null,
  sessionId: null,
  processId: null,
  startedAt: null,
  queuedAt: null,
  waitingBehind: null,
  foldedInto: null,
  state: 'skipped',
  outcome: 'skipped_overlap',
  reason: 'overlap',
  endedAt: Date.parse('2026-06-01T08:00:10Z'),
} as const satisfies Run;

describe("a run's trace ids (issue #26 item 3)", () => {
  it('are derived from the correlation id alone: W3C hex of 32 and 16 digits, distinct per run', () => {
    const ids = runTraceIds(RUN.correlationId);
    expect(ids.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(ids.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(runTraceIds(RUN.correlationId)).toEqual(ids);
    expect(runTraceIds('run_other').traceId).not.toBe(ids.traceId);
    expect(traceparentOf(RUN.correlationId)).toBe(`00-${ids.traceId}-${ids.spanId}-01`);
  });

  it('a run skipped at its turn has a span from its claim to its skip, without lateness or start event', () => {
    const span = runSpan(RUN, 0);
    expect(span).toEqual({
      name: 'ursa.run',
      kind: 'internal',
      startMs: RUN.claimedAt,
      endMs: RUN.endedAt,
      attributes: {
        'ursa.tenant': 'acme',
        'ursa.project': 'ops',
        'ursa.scheduler': 'job',
        'ursa.run.correlation_id': RUN.correlationId,
        'ursa.run.occurrence': '2026-06-01T08:00:10Z',
        'ursa.run.trigger': 'cron',
        'ursa.run.outcome': 'skipped_overlap',
        'ursa.run.attempt': 0,
        'ursa.run.coalesced': false,
        'ursa.run.coalesced_count': 0,
        'ursa.run.reason': 'overlap',
        'ursa.worker.id': 'wrk_a',
      },
      ids: runTraceIds(RUN.correlationId),
    });
  });

  it('a coalesced run whose absorbed count is not at hand leaves the count out, not 0', () => {
    const coalesced = { ...RUN, coalesced: true, coalescedUntil: Date.parse('2026-06-01T08:00:40Z') };
    const { attributes } = runSpan(coalesced, undefined);
    expect(attributes['ursa.run.coalesced_count']).toBeUndefined();
    expect(attributes['ursa.run.coalesced_until']).toBe('2026-06-01T08:00:40Z');
    expect(runSpan(coalesced, 3).attributes['ursa.run.coalesced_count']).toBe(3);
  });

  it('a failed tick is an error span with no counts', () => {
    expect(tickSpan('wrk_a', 5, 7, undefined, 'the tick failed')).toEqual({
      name: 'ursa.tick',
      kind: 'internal',
      startMs: 5,
      endMs: 7,
      attributes: { 'ursa.worker.id': 'wrk_a' },
      error: 'the tick failed',
    });
  });
});
