import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { backfillScheduler } from '../../src/service/backfill.js';
import { pauseScheduler } from '../../src/service/pauses.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #22 item 3: a backfill runs every occurrence of a past range that has no run yet, each
// once, oldest first, one after another, as a queue of its own in the scheduler's lane.

const T = 'acme';
const P = 'ops';
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const scheduler = (overlap: string, extra = '') =>
  `description: hourly\ncron: "0 0 * * * *"\nrecipe: held\noverlap: ${overlap}\n${extra}`;

async function setup(dialect: (typeof DIALECTS)[number], overlap: string, extra = '') {
  t = await testRuntime('2026-06-01T08:30:00Z', { dialect });
  const engine = controlledEngine();
  t.rt.engines.register(engine);
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/job.yaml': scheduler(overlap, extra),
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = t.worker();
  await worker.bootstrap();
  return { t, engine, worker };
}

async function runs(rt: Runtime) {
  const list = await rt.repos.runs.listForScheduler(T, P, 'job', 50);
  return list.map((r) => [iso(r.scheduledFor).slice(11, 16), r.trigger, r.state, r.outcome]).reverse();
}

const alice = { tenant: T, project: P, user: 'alice', role: 'write' } as const;
const backfill = (rt: Runtime, from: string, to: string) => backfillScheduler(rt, alice, 'job', { from, to });

describe.each(DIALECTS)('backfill on %s (issue #22)', (dialect) => {
  it('runs the occurrences oldest first, one after another, each once even when asked twice', async () => {
    const { t, engine, worker } = await setup(dialect, 'skip');
    const first = engine.started();
    const result = await backfill(t.rt, '2026-06-01T05:00:00Z', '2026-06-01T07:00:00Z');
    expect(result).toMatchObject({ occurrences: 3, queued: 3, existing: 0, from: '2026-06-01T05:00:00Z' });
    expect(result.first?.scheduledFor).toBe('2026-06-01T05:00:00Z');
    await worker.reap();
    const p5 = await first;
    expect(p5.request.context.scheduledFor).toBe(Date.parse('2026-06-01T05:00:00Z'));
    expect(await runs(t.rt)).toEqual([
      ['05:00', 'backfill', 'started', 'pending'],
      ['06:00', 'backfill', 'queued', 'pending'],
      ['07:00', 'backfill', 'queued', 'pending'],
    ]);
    // Asked again over a wider range: only the occurrence without a run is queued.
    expect(await backfill(t.rt, '2026-06-01T04:00:00Z', '2026-06-01T07:00:00Z')).toMatchObject({
      occurrences: 4,
      queued: 1,
      existing: 3,
      first: { scheduledFor: '2026-06-01T04:00:00Z' },
    });
    // 04:00 was queued while 05:00 ran: it waits for its turn (one at a time), then runs before 06:00.
    await worker.reap();
    expect(engine.processes).toHaveLength(1);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const next = engine.started();
      engine.processes[i]?.finish();
      const p = await next;
      order.push(iso(p.request.context.scheduledFor).slice(11, 16));
      // Never two at once: the one just started is the only one not finished.
      expect(engine.processes).toHaveLength(i + 2);
    }
    engine.processes[3]?.finish();
    await worker.executor.settled();
    expect(order).toEqual(['04:00', '06:00', '07:00']);
    expect(await runs(t.rt)).toEqual([
      ['04:00', 'backfill', 'ended', 'completed'],
      ['05:00', 'backfill', 'ended', 'completed'],
      ['06:00', 'backfill', 'ended', 'completed'],
      ['07:00', 'backfill', 'ended', 'completed'],
    ]);
    // The feed and the run log say it was a backfill.
    const lines = await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 100);
    expect(lines.filter((l) => l.kind === 'START')).toHaveLength(4);
    const run = (await t.rt.repos.runs.listForScheduler(T, P, 'job', 1))[0];
    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath ?? '' });
    expect(log?.body).toContain('(backfill)');
    await worker.stop();
  });

  it('a scheduled occurrence that falls due meets the overlap policy against the active backfill run', async () => {
    const { t, engine, worker } = await setup(dialect, 'queue');
    const first = engine.started();
    await backfill(t.rt, '2026-06-01T06:00:00Z', '2026-06-01T07:00:00Z');
    await worker.reap();
    const p6 = await first;
    // 09:00 falls due while the 06:00 backfill runs: queued by its policy, ahead of 07:00.
    t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
    await worker.heartbeat();
    await worker.tick();
    await until(
      async () => (await runs(t.rt)).some((r) => r[0] === '09:00' && r[2] === 'queued'),
      '09:00 queued',
    );
    const next = engine.started();
    p6.finish();
    const p9 = await next;
    expect(p9.request.context.scheduledFor).toBe(Date.parse('2026-06-01T09:00:00Z'));
    const last = engine.started();
    p9.finish();
    const p7 = await last;
    expect(p7.request.context.scheduledFor).toBe(Date.parse('2026-06-01T07:00:00Z'));
    p7.finish();
    await worker.executor.settled();
    expect(await runs(t.rt)).toEqual([
      ['06:00', 'backfill', 'ended', 'completed'],
      ['07:00', 'backfill', 'ended', 'completed'],
      ['09:00', 'cron', 'ended', 'completed'],
    ]);
    await worker.stop();
  });

  it('holds a backfill occurrence given the lane while a scheduled run is active, and runs it at the next reap', async () => {
    const { t, engine, worker } = await setup(dialect, 'skip');
    const cron = engine.started();
    t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
    await worker.heartbeat();
    await worker.tick();
    const p9 = await cron;
    const { first } = await backfill(t.rt, '2026-06-01T06:00:00Z', '2026-06-01T06:00:00Z');
    // Given the lane while 09:00 runs (as a promotion racing the cron start would): it waits.
    expect(await worker.executor.promoteWaiting({ tenant: T, project: P, name: 'job' })).toBe(true);
    await until(
      async () => !worker.executor.dispatching(first?.correlationId ?? ''),
      'its admission is done',
    );
    expect(engine.processes).toHaveLength(1);
    expect((await runs(t.rt))[0]).toEqual(['06:00', 'backfill', 'queued', 'pending']);
    p9.finish();
    await until(async () => (await runs(t.rt))[1]?.[2] === 'ended', '09:00 ended');
    const p6 = engine.started();
    await worker.reap();
    expect((await p6).request.context.scheduledFor).toBe(Date.parse('2026-06-01T06:00:00Z'));
    engine.processes[1]?.finish();
    await worker.executor.settled();
    await worker.stop();
  });

  it('refuses a range over the limit with its count, a range past now, and a paused scheduler; nothing is queued', async () => {
    const { t, worker } = await setup(dialect, 'skip');
    await expect(backfill(t.rt, '2026-01-01T00:00:00Z', '2026-06-01T00:00:00Z')).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      message: expect.stringContaining('3,625 occurrences'),
    });
    await expect(backfill(t.rt, '2026-06-01T07:00:00Z', '2026-06-01T09:00:00Z')).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      field: 'to',
    });
    await expect(backfill(t.rt, '2026-06-01T07:00:00Z', '2026-06-01T06:00:00Z')).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      field: 'to',
    });
    await expect(backfill(t.rt, 'yesterday', '2026-06-01T06:00:00Z')).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      field: 'from',
      value: 'yesterday',
    });
    await pauseScheduler(t.rt, alice, 'job', 'maintenance');
    await expect(backfill(t.rt, '2026-06-01T06:00:00Z', '2026-06-01T07:00:00Z')).rejects.toMatchObject({
      code: 'SCHEDULER_PAUSED',
      message: expect.stringContaining('maintenance'),
    });
    expect(await runs(t.rt)).toEqual([]);
    await worker.stop();
  });

  it('a pause during a backfill withdraws its queued occurrences, recorded skipped_disabled', async () => {
    const { t, engine, worker } = await setup(dialect, 'skip');
    const first = engine.started();
    await backfill(t.rt, '2026-06-01T05:00:00Z', '2026-06-01T07:00:00Z');
    await worker.reap();
    const p5 = await first;
    await pauseScheduler(t.rt, alice, 'job', 'enough');
    p5.finish();
    await worker.executor.settled();
    expect(await runs(t.rt)).toEqual([
      ['05:00', 'backfill', 'ended', 'completed'],
      ['06:00', 'backfill', 'skipped', 'skipped_disabled'],
      ['07:00', 'backfill', 'skipped', 'skipped_disabled'],
    ]);
    expect(engine.processes).toHaveLength(1);
    await worker.stop();
  });
});
