import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import { identifyGroup } from '../../src/processes/process-group.js';
import { DIALECTS } from '../support/dialects.js';
import { claimedRunRow } from '../support/runs.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #20: a reap read the live workers once, then ended a lost worker's leftover processes
// (SIGTERM, a grace of seconds, SIGKILL), and afterwards took the claims, ended the runs, failed
// the processes and ended the workflow runs of every worker missing from that old list, even one
// that renewed its lease meanwhile. Who is dead is decided by each statement as it runs.

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
/** A worker counts as lost once its heartbeat is older than the lease and the takeover margin. */
const DEAD_AFTER = TTL + TAKEOVER_MARGIN_MS;
const SLOW = { timeout: 30_000 };
const KEY = { tenant: T, project: P, name: 'job' };

let t: TestRuntime | undefined;
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  await t?.close();
  t = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The work a worker `workerId` holds: a claimed run, a started run with its process, a workflow run. */
async function holdWork(t: TestRuntime, workerId: string, at: number): Promise<void> {
  const { db } = t.store;
  const claimed = { ...claimedRunRow(KEY, 'run-claimed', at), worker_id: workerId };
  const started = {
    ...claimedRunRow(KEY, 'run-started', at - 10_000),
    worker_id: workerId,
    state: 'started',
    process_id: 'proc_started',
    started_at: at - 10_000,
  };
  await db.insertInto('runs').values([claimed, started]).execute();
  await t.rt.repos.processes.create({
    id: 'proc_started',
    tenant: T,
    project: P,
    sessionId: 'ses_x',
    recipe: 'long',
    engine: 'shell',
    status: 'running',
    ownerUser: 'alice',
    triggerOrigin: {
      source: 'scheduler:job',
      scheduledFor: at,
      correlationId: 'run-started',
      trigger: 'cron',
    },
    params: {},
    initialMessage: null,
    createdAt: at - 10_000,
  });
  await t.rt.repos.workflowRuns.create(
    {
      id: 'wfr_held',
      tenant: T,
      project: P,
      workflow: 'flow',
      params: {},
      document: '',
      runAs: 'alice',
      sessionId: 'ses_y',
      correlationId: null,
      createdAt: at - 10_000,
      workerId,
    },
    [{ name: 'only', recipe: 'long' }],
  );
}

describe.each(DIALECTS)('a reap on %s decides who is dead as it acts (issue #20)', (dialect) => {
  it(
    'a worker that renews while the reap ends leftover processes keeps its claims, runs, processes and workflow runs',
    SLOW,
    async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      const start = t.clock.now();
      const dir = mkdtempSync(join(tmpdir(), 'ursa-reap-'));
      dirs.push(dir);
      const marks = join(dir, 'marks');
      const reaper = t.worker({ leaseTtlMs: TTL });
      for (const id of [reaper.id, 'wrk_slow'])
        await t.rt.repos.workers.register({ id, host: 'here', pid: 1, startedAt: start });
      await holdWork(t, 'wrk_slow', start + 60_000);
      // A leftover of a worker that is gone for good: it ignores SIGTERM (after marking it), so
      // the reap waits the whole grace before its SIGKILL.
      const leftover = spawn(
        'sh',
        [
          '-c',
          `trap 'echo term >> "$1"' TERM; echo start >> "$1"; while :; do sleep 0.05; done`,
          'sh',
          marks,
        ],
        { detached: true, stdio: 'ignore' },
      );
      children.push(leftover);
      const lines = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean) : []);
      await until(() => lines().includes('start'), 'the leftover started');
      await t.rt.repos.processGroups.record([
        {
          ...identifyGroup(leftover.pid as number),
          processId: 'proc_leftover',
          workerId: 'wrk_gone',
          recordedAt: start,
        },
      ]);
      // Both workers' heartbeats are past the lease and the margin when the reap begins.
      t.clock.advance(DEAD_AFTER + 1);

      const reaping = reaper.reap();
      await until(() => lines().includes('term'), 'the reap signalled the leftover');
      // The slow worker renews while the reap waits out the leftover's grace.
      expect(await t.rt.repos.workers.heartbeat('wrk_slow', t.clock.now())).toBe(true);
      expect(await reaping).toEqual({ lost: 0, resumed: 0 });

      const runs = await t.store.db
        .selectFrom('runs')
        .select(['correlation_id', 'state', 'worker_id'])
        .orderBy('correlation_id')
        .execute();
      expect(runs).toEqual([
        { correlation_id: 'run-claimed', state: 'claimed', worker_id: 'wrk_slow' },
        { correlation_id: 'run-started', state: 'started', worker_id: 'wrk_slow' },
      ]);
      expect((await t.rt.repos.processes.get('proc_started'))?.status).toBe('running');
      expect((await t.rt.repos.workflowRuns.get(T, 'wfr_held'))?.status).toBe('running');
      const [worker] = await t.store.db
        .selectFrom('workers')
        .select('stopped_at')
        .where('id', '=', 'wrk_slow')
        .execute();
      expect(worker?.stopped_at).toBeNull();
    },
  );
});

describe.each(DIALECTS)('a reap on %s and workflow steps (issue #20)', (dialect) => {
  it('leaves the running step’s process of a live worker’s workflow run running; fails a lost one’s', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const now = t.clock.now();
    const reaper = t.worker({ leaseTtlMs: TTL });
    for (const id of [reaper.id, 'wrk_live'])
      await t.rt.repos.workers.register({ id, host: 'here', pid: 1, startedAt: now });
    for (const [workerId, run] of [
      ['wrk_live', 'wfr_live'],
      ['wrk_gone', 'wfr_lost'],
    ] as const) {
      await t.rt.repos.workflowRuns.create(
        {
          id: run,
          tenant: T,
          project: P,
          workflow: 'flow',
          params: {},
          document: '',
          runAs: 'alice',
          sessionId: 'ses_y',
          correlationId: null,
          createdAt: now,
          workerId,
        },
        [{ name: 'only', recipe: 'long' }],
      );
      await t.rt.repos.processes.create({
        id: `proc_${run}`,
        tenant: T,
        project: P,
        sessionId: 'ses_y',
        recipe: 'long',
        engine: 'shell',
        status: 'running',
        ownerUser: 'alice',
        triggerOrigin: {
          source: 'magrathea:flow',
          scheduledFor: now,
          correlationId: run,
          trigger: 'workflow',
        },
        params: {},
        initialMessage: null,
        createdAt: now,
      });
      await t.rt.repos.workflowRuns.updateStep(run, 0, {
        status: 'running',
        process_id: `proc_${run}`,
        started_at: now,
      });
    }
    await reaper.reap();
    expect((await t.rt.repos.processes.get('proc_wfr_live'))?.status).toBe('running');
    expect((await t.rt.repos.workflowRuns.get(T, 'wfr_live'))?.status).toBe('running');
    expect((await t.rt.repos.processes.get('proc_wfr_lost'))?.status).toBe('failed');
    expect((await t.rt.repos.workflowRuns.get(T, 'wfr_lost'))?.status).toBe('failed');
  });
});
