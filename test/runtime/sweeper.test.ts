import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UrsaError } from '../../src/errors/index.js';
import { RunRecorder } from '../../src/runtime/recorder.js';
import { runLogPath } from '../../src/runtime/run-log.js';
import { sweep } from '../../src/runtime/sweeper.js';
import { setSetting } from '../../src/service/settings.js';
import { libraryActor } from '../../src/store/audit.js';
import type { FeedLine } from '../../src/store/feed.js';
import type { Run } from '../../src/store/runs.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
const DAY = 86_400_000;
const START = '2026-06-01T08:00:00Z';
const T0 = Date.parse(START);

/** A minimal ended run of scheduler `job` (as the executor would record it). */
function endedRun(correlationId: string, at: number, project = P): Run {
  return {
    correlationId,
    tenant: T,
    project,
    name: 'job',
    scheduledFor: at,
    trigger: 'cron',
    coalesced: false,
    coalescedUntil: null,
    claimedAt: at,
    state: 'ended',
    outcome: 'completed',
    reason: null,
    runAs: 'alice',
    sessionId: null,
    processId: null,
    logPath: runLogPath('job', at, correlationId),
    startedAt: at,
    endedAt: at,
    workerId: null,
    lockMode: 'full',
    attempt: 1,
    fencingToken: null,
    queuedAt: null,
    waitingBehind: null,
    foldedInto: null,
  };
}

/** A feed line of `tenant` at `at`. */
function line(tenant: string, at: number, traceId: string): Omit<FeedLine, 'id'> {
  return {
    tenant,
    project: P,
    at,
    kind: 'END',
    refType: 'SCHEDULER',
    refId: 'job',
    traceId,
    outcome: 'completed',
    logPath: null,
    payload: {},
  };
}

// spec §9a (run-log TTL, tri-state, resolved per write) and the sweeper of decisions §2 / spec §12.
describe.each(DIALECTS)('run-log retention and the sweeper on %s', (dialect) => {
  let t: TestRuntime;
  let recorder: RunRecorder;
  const setRetention = (project: string, days: string) =>
    setSetting(
      t.rt,
      { tenant: T, scope: 'project', subject: project, key: 'scheduler.log.retentionDays', value: days },
      t.clock.now(),
    );
  const logOf = (run: Run) =>
    t.rt.repos.documents.get({ tenant: T, project: run.project, path: run.logPath });

  beforeEach(async () => {
    t = await testRuntime(START, { dialect, settings: { runLogRetentionDays: 7 } });
    recorder = new RunRecorder(t.rt);
  });
  afterEach(() => t.close());

  it('writes a run log that expires after the operator default of 7 days', async () => {
    const run = endedRun('run_a', T0);
    await recorder.writeRunLog(run);
    expect((await logOf(run))?.expiresAt).toBe(T0 + 7 * DAY);
  });

  it('retention 0 keeps the run log forever; a negative retention writes none', async () => {
    await setRetention(P, '0');
    const kept = endedRun('run_forever', T0);
    await recorder.writeRunLog(kept);
    expect(await logOf(kept)).toMatchObject({ path: kept.logPath, expiresAt: null });

    await setRetention(P, '-1');
    const skipped = endedRun('run_none', T0 + 1000);
    await recorder.writeRunLog(skipped);
    expect(await logOf(skipped)).toBeUndefined();
    expect((await t.rt.repos.documents.list(T, P, '_vance/logs/')).map((d) => d.path)).toEqual([
      kept.logPath,
    ]);
  });

  it('follows the project → _tenant → operator cascade, clamped to 365 days', async () => {
    await setRetention('_tenant', '30');
    await setRetention('audit', '1000');
    const ops = endedRun('run_ops', T0);
    const audit = endedRun('run_audit', T0, 'audit');
    await recorder.writeRunLog(ops);
    await recorder.writeRunLog(audit);
    expect((await logOf(ops))?.expiresAt).toBe(T0 + 30 * DAY);
    expect((await logOf(audit))?.expiresAt).toBe(T0 + 365 * DAY);
  });

  it('resolves the retention afresh on every write: a changed setting applies to the next write', async () => {
    const run = endedRun('run_change', T0);
    await recorder.writeRunLog({ ...run, state: 'started', outcome: 'pending', endedAt: null } as Run);
    expect((await logOf(run))?.expiresAt).toBe(T0 + 7 * DAY);
    await setRetention(P, '30');
    t.clock.set(T0 + 5_000);
    await recorder.writeRunLog(run);
    expect(await logOf(run)).toMatchObject({ expiresAt: T0 + 5_000 + 30 * DAY });
    expect((await logOf(run))?.body).toContain('outcome: completed');
    await setRetention(P, '0');
    await recorder.writeRunLog({ ...run, outcome: 'failed' } as Run);
    expect((await logOf(run))?.expiresAt).toBeNull();
  });

  it('sweeps expired run logs and keeps the others', async () => {
    const old = endedRun('run_old', T0);
    await recorder.writeRunLog(old); // expires T0 + 7 days
    t.clock.set(T0 + 2 * DAY);
    const recent = endedRun('run_recent', T0 + 2 * DAY);
    await recorder.writeRunLog(recent); // expires T0 + 9 days
    await setRetention(P, '0');
    const forever = endedRun('run_forever', T0 + 2 * DAY + 1);
    await recorder.writeRunLog(forever);

    expect(await sweep(t.rt, T0 + 7 * DAY - 1)).toEqual({ documents: 0, feedLines: 0 });
    expect(await sweep(t.rt, T0 + 7 * DAY)).toEqual({ documents: 1, feedLines: 0 });
    expect(await logOf(old)).toBeUndefined();
    expect((await t.rt.repos.documents.list(T, P, '_vance/logs/')).map((d) => d.path).sort()).toEqual(
      [recent.logPath, forever.logPath].sort(),
    );
    expect(await sweep(t.rt, T0 + 400 * DAY)).toEqual({ documents: 1, feedLines: 0 });
    expect((await t.rt.repos.documents.list(T, P, '_vance/logs/')).map((d) => d.path)).toEqual([
      forever.logPath,
    ]);
  });

  it("deletes feed lines older than each tenant's feed.retentionDays and leaves other tenants alone", async () => {
    const now = Date.parse('2026-09-01T00:00:00Z');
    const feed = t.rt.repos.feed;
    const setFeed = (tenant: string, days: string) =>
      setSetting(t.rt, { tenant, scope: 'tenant', subject: '', key: 'feed.retentionDays', value: days }, now);
    await setFeed(T, '30');
    await setFeed('forever', '0');
    for (const [tenant, ageDays, trace] of [
      [T, 31, 'acme_31d'],
      [T, 30, 'acme_30d'], // exactly at the cutoff: not older, kept
      [T, 29, 'acme_29d'],
      ['default90', 91, 'd_91d'],
      ['default90', 89, 'd_89d'],
      ['forever', 1000, 'f_1000d'],
    ] as const) {
      await feed.append(line(tenant, now - ageDays * DAY, trace));
    }
    expect(await sweep(t.rt, now)).toEqual({ documents: 0, feedLines: 2 });
    const left = await t.store.db.selectFrom('feed').select(['tenant', 'trace_id']).orderBy('id').execute();
    expect(left).toEqual([
      { tenant: T, trace_id: 'acme_30d' },
      { tenant: T, trace_id: 'acme_29d' },
      { tenant: 'default90', trace_id: 'd_89d' },
      { tenant: 'forever', trace_id: 'f_1000d' },
    ]);
  });

  it('deletes more than one batch, in bounded statements', async () => {
    const docs = t.rt.repos.documents;
    for (let i = 0; i < 5; i++)
      await docs.put({ tenant: T, project: P, path: `x/${i}.md` }, 'x', libraryActor('u'), 1, 100);
    await docs.put({ tenant: T, project: P, path: 'x/keep.md' }, 'x', libraryActor('u'), 1, T0 + 1);
    for (let i = 0; i < 3; i++) await t.rt.repos.feed.append(line(T, 1000 + i, `old_${i}`));
    await t.rt.repos.feed.append(line(T, T0, 'new'));
    const documentBatches = vi.spyOn(docs, 'sweepExpired');
    const feedBatches = vi.spyOn(t.rt.repos.feed, 'sweepOlderThan');

    expect(await sweep(t.rt, T0, { batch: 2 })).toEqual({ documents: 5, feedLines: 3 });
    expect(documentBatches.mock.calls).toEqual([
      [T0, 2],
      [T0, 2],
      [T0, 2],
    ]);
    expect(await Promise.all(documentBatches.mock.results.map((r) => r.value))).toEqual([2, 2, 1]);
    expect(feedBatches.mock.calls).toEqual([
      [T, T0 - 90 * DAY, 2],
      [T, T0 - 90 * DAY, 2],
    ]);
    expect((await docs.list(T, P, 'x/')).map((d) => d.path)).toEqual(['x/keep.md']);
    expect((await t.store.db.selectFrom('feed').select('trace_id').execute()).map((r) => r.trace_id)).toEqual(
      ['new'],
    );
  });

  it('refuses a batch that is not a whole number ≥ 1', async () => {
    await expect(sweep(t.rt, T0, { batch: 0 })).rejects.toThrow(UrsaError);
    await expect(sweep(t.rt, T0, { batch: 1.5 })).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      field: 'batch',
    });
  });

  it("runs in the worker's loop", async () => {
    const docs = t.rt.repos.documents;
    await docs.put({ tenant: T, project: P, path: 'expired.md' }, 'x', libraryActor('u'), 1, T0 - 1);
    await docs.put({ tenant: T, project: P, path: 'live.md' }, 'x', libraryActor('u'), 1, T0 + DAY);
    const worker = t.worker({ exclusive: true });
    await worker.start();
    try {
      // The first pass of the loop sweeps as of the (fixed) clock: only the expired document goes.
      await until(
        async () => (await docs.get({ tenant: T, project: P, path: 'expired.md' })) === undefined,
        'sweep',
      );
      expect((await docs.list(T, P, '')).map((d) => d.path)).toEqual(['live.md']);
    } finally {
      await worker.stop();
    }
  });
});
