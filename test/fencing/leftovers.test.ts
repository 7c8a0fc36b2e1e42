import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import { hostIdentity, identifyGroup, readStat } from '../../src/processes/process-group.js';
import { WorkflowRunner } from '../../src/runtime/workflow-runner.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
/** A worker counts as lost once its heartbeat is older than the lease and the takeover margin. */
const DEAD_AFTER = TTL + TAKEOVER_MARGIN_MS;
const SLOW = { timeout: 30_000 };

let t: TestRuntime | undefined;
const children: ChildProcess[] = [];
// Groups a test's runs started (their leaders' pids), ended here should the test fail.
const groups: number[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const pgid of [...children.splice(0).map((child) => child.pid as number), ...groups.splice(0)]) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  await t?.close();
  t = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function running(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** A process in a group of its own, as a run's would be, that nothing in the store knows of. */
function stranger(): number {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

/** A row of `process_groups` as a worker `workerId` (not registered: never live) would have written it. */
async function recordLeftover(
  t: TestRuntime,
  pgid: number,
  changes: Partial<ReturnType<typeof identifyGroup>>,
) {
  await t.rt.repos.processGroups.record([
    {
      ...identifyGroup(pgid),
      ...changes,
      processId: `proc_leftover_${pgid}`,
      workerId: 'wrk_gone',
      recordedAt: t.clock.now(),
    },
  ]);
}

async function groupRows(t: TestRuntime) {
  const rows = await t.rt.repos.store.db.selectFrom('process_groups').selectAll().execute();
  return rows.map((r) => [r.process_id, Number(r.pgid), r.ending]);
}

// Issue #20 (No orphans), decisions §5 fencing: what a reap ends of the process groups recorded
// by workers that are not live, and what it never touches.
describe.each(DIALECTS)('leftover process groups on %s (issue #20)', (dialect) => {
  it(
    'leaves a live worker’s groups alone; once its lease lapsed, another worker’s reap ends them before the run',
    SLOW,
    async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      const dir = mkdtempSync(join(tmpdir(), 'ursa-leftovers-'));
      dirs.push(dir);
      const marks = join(dir, 'marks');
      const script = `trap 'echo "end $$" >> "$URSA_PARAM_MARKS"; exit 0' TERM; echo "start $$" >> "$URSA_PARAM_MARKS"; while :; do sleep 0.05; done`;
      await applyDirectory(
        t.rt,
        projectFolder({
          '_vance/recipes/long.yaml': shellRecipe(script, { marks }),
          '_vance/scheduler/job.yaml':
            'description: long\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: long\n',
        }),
        T,
        P,
        libraryActor('alice'),
      );
      const lines = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean) : []);
      // A stands for a worker that stalled past its lease: alive in this test, it records nothing
      // of its run's end until the test lets it.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const a = t.worker({ leaseTtlMs: TTL, faults: { beforeEnd: () => held } });
      const b = t.worker({ leaseTtlMs: TTL }, await t.peer());
      await a.bootstrap();
      await b.bootstrap();
      t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
      await a.heartbeat();
      await a.tick();
      await until(() => lines().length === 1, 'the run started');
      await until(async () => (await groupRows(t as TestRuntime)).length === 1, 'its group recorded');
      const pid = Number(lines()[0]?.split(' ')[1]);

      // A's lease holds: B's reap leaves its group running.
      expect(await b.reap()).toEqual({ lost: 0, resumed: 0 });
      expect(running(pid)).toBe(true);
      expect(lines()).toEqual([`start ${pid}`]);

      t.clock.advance(DEAD_AFTER + 1);
      expect(await b.reap()).toEqual({ lost: 1, resumed: 0 });
      expect(lines()).toEqual([`start ${pid}`, `end ${pid}`]);
      expect(running(pid)).toBe(false);
      const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
      expect(run).toMatchObject({ outcome: 'failed', reason: 'worker-lost' });
      // No record of the group is left open: B marked it ended, or A forgot it once its engine
      // returned (whichever came first).
      expect((await groupRows(t)).filter((row) => row[2] !== 'ended')).toEqual([]);
      release();
      await a.executor.drain(0);
    },
  );

  it(
    'never signals a group recorded on another boot or pid namespace; leaves its row open',
    SLOW,
    async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      const [boot, namespace] = [stranger(), stranger()];
      await recordLeftover(t, boot, { bootId: 'another-boot' });
      await recordLeftover(t, namespace, { pidNamespace: 'pid:[1]' });
      await t.worker({ exclusive: true }).bootstrap();
      for (const pid of [boot, namespace]) expect(running(pid)).toBe(true);
      expect((await groupRows(t)).map(([, , ending]) => ending)).toEqual([null, null]);
    },
  );

  it(
    'ends a group of this boot and pid namespace recorded under another host name (a host renamed at runtime)',
    SLOW,
    async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      const pid = stranger();
      await recordLeftover(t, pid, { host: `not-${hostIdentity().host}` });
      await t.worker({ exclusive: true }).bootstrap();
      expect(running(pid)).toBe(false);
      expect(await groupRows(t)).toEqual([[`proc_leftover_${pid}`, pid, 'ended']]);
    },
  );

  it(
    'ends the processes of a lost worker’s workflow step whose group was never recorded, by the step’s process id',
    SLOW,
    async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      const dir = mkdtempSync(join(tmpdir(), 'ursa-leftovers-'));
      dirs.push(dir);
      const marks = join(dir, 'marks');
      const script = `trap 'echo "end $$" >> "$URSA_PARAM_MARKS"; exit 0' TERM; echo "start $$" >> "$URSA_PARAM_MARKS"; while :; do sleep 0.05; done`;
      await applyDirectory(
        t.rt,
        projectFolder({
          '_vance/recipes/long.yaml': shellRecipe(script, { marks }),
          '_vance/workflows/flow.yaml': 'description: one step\nsteps:\n  - name: only\n    recipe: long\n',
        }),
        T,
        P,
        libraryActor('alice'),
      );
      const lines = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean) : []);
      // A worker that died between the step's spawn and its group's record: no group is reported
      // (no RunningGroups), so no row is ever written; the worker is not registered, so it is lost.
      const { done, run } = await new WorkflowRunner(t.rt, 'wrk_gone').start(T, P, 'flow', {}, 'alice');
      await until(() => lines().length === 1, 'the step started');
      const pid = Number(lines()[0]?.split(' ')[1]);
      groups.push(pid);
      expect(await groupRows(t)).toEqual([]);

      await t.worker({ exclusive: true }).bootstrap();
      expect(lines()).toEqual([`start ${pid}`, `end ${pid}`]);
      expect(running(pid)).toBe(false);
      // The runner of this test lives on (the lost worker's would not): it records the step's end.
      await done;
      expect((await t.rt.repos.workflowRuns.get(T, run.id))?.status).not.toBe('running');
    },
  );

  it(
    'never signals a recorded pid that names another process now (another start time): marked reused',
    SLOW,
    async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      const pid = stranger();
      const ticks = identifyGroup(pid).leaderStartTicks as number;
      await recordLeftover(t, pid, { leaderStartTicks: ticks - 100 });
      await t.worker({ exclusive: true }).bootstrap();
      expect(running(pid)).toBe(true);
      expect(await groupRows(t)).toEqual([[`proc_leftover_${pid}`, pid, 'reused']]);
    },
  );

  it('ends a recorded group of an earlier worker at start, and marks one that is gone', SLOW, async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const pid = stranger();
    await recordLeftover(t, pid, {});
    const exited = spawn('true', [], { detached: true, stdio: 'ignore' });
    const gone = exited.pid as number;
    const reaped = new Promise((resolve) => exited.once('exit', resolve));
    await recordLeftover(t, gone, {});
    await reaped;
    await t.worker({ exclusive: true }).bootstrap();
    expect(running(pid)).toBe(false);
    expect((await groupRows(t)).sort()).toEqual(
      [
        [`proc_leftover_${pid}`, pid, 'ended'],
        [`proc_leftover_${gone}`, gone, 'gone'],
      ].sort(),
    );
  });
});
