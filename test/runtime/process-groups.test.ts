import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineCalls } from '../../src/fencing/engine-calls.js';
import { LeaseGate } from '../../src/fencing/lease-gate.js';
import type { RunningGroupChange } from '../../src/fencing/running-groups.js';
import { RunningGroups } from '../../src/fencing/running-groups.js';
import type { Runtime } from '../../src/runtime/context.js';
import type { Worker } from '../../src/runtime/worker.js';
import { WorkflowRunner } from '../../src/runtime/workflow-runner.js';
import { applyDirectory } from '../../src/service/apply.js';
import { stopProcess } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
// Real processes, and a fresh PostgreSQL database per test, on a shared machine.
const SLOW = { timeout: 30_000 };
const P = 'ops';

let t: TestRuntime | undefined;
let dir = '';
afterEach(async () => {
  // Whatever a failing test left running.
  for (const mark of marks()) {
    try {
      process.kill(mark.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  await t?.close();
  t = undefined;
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

// A member of a run's group, started in the background with its output elsewhere: on SIGTERM it
// marks `term`, takes 300 ms to clean up (as an agent flushing its work would), marks `exit`.
const MEMBER = `trap 'echo "term member $$ $(date +%s%3N)" >> "$1"; sleep 0.3; echo "exit member $$ $(date +%s%3N)" >> "$1"; exit 0' TERM
echo "start member $$ $(date +%s%3N)" >> "$1"
while :; do sleep 0.05; done
`;

// A run's command: first it marks `overlap <pid>` for every member of an earlier run still
// running; then it starts its member, marks its own start, and runs until SIGTERM (param mode
// `exit`: exits at once, leaving its member behind).
const LEADER = `marks="$URSA_PARAM_MARKS"
for p in $(sed -n 's/^start member \\([0-9]*\\) .*/\\1/p' "$marks" 2>/dev/null); do
  if [ -r /proc/$p/stat ] && [ "$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f1)" != Z ]; then
    echo "overlap $p $(date +%s%3N)" >> "$marks"
  fi
done
sh "$URSA_PARAM_DIR/member.sh" "$marks" >/dev/null 2>&1 &
member=$!
until grep -q "^start member $member " "$marks" 2>/dev/null; do sleep 0.01; done
trap 'echo "term leader $$ $(date +%s%3N)" >> "$marks"; exit 0' TERM
echo "start leader $$ $(date +%s%3N)" >> "$marks"
[ "$URSA_PARAM_MODE" = exit ] && exit 0
while :; do sleep 0.05; done
`;

interface Mark {
  readonly kind: string;
  readonly pid: number;
  readonly ms: number;
}

function marks(): Mark[] {
  const file = join(dir, 'marks');
  if (dir === '' || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [a, b, pid, ms] = line.split(' ');
      return b === 'member' || b === 'leader'
        ? { kind: `${a} ${b}`, pid: Number(pid), ms: Number(ms) }
        : { kind: a as string, pid: Number(b), ms: Number(pid) };
    });
}

const pidsOf = (kind: string) =>
  marks()
    .filter((m) => m.kind === kind)
    .map((m) => m.pid);

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/** A project whose scheduler `job` runs {@link LEADER} with `overlap` (and the recipe's `extra`). */
async function setup(
  dialect: (typeof DIALECTS)[number],
  options: { overlap?: string; mode?: string; extra?: string; shutdownGraceMs?: number } = {},
) {
  t = await testRuntime('2026-06-01T08:00:00Z', {
    dialect,
    settings: { shutdownGraceMs: options.shutdownGraceMs ?? 100 },
  });
  dir = mkdtempSync(join(tmpdir(), 'ursa-groups-'));
  writeFileSync(join(dir, 'member.sh'), MEMBER);
  writeFileSync(join(dir, 'leader.sh'), LEADER);
  const recipe = [
    'description: a run with a background member',
    'engine: shell',
    `command: ["sh", ${JSON.stringify(join(dir, 'leader.sh'))}]`,
    'params:',
    `  marks: ${JSON.stringify(join(dir, 'marks'))}`,
    `  dir: ${JSON.stringify(dir)}`,
    `  mode: ${options.mode ?? 'wait'}`,
    options.extra ?? '',
  ].join('\n');
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/grouped.yaml': `${recipe}\n`,
      '_vance/scheduler/job.yaml': `description: groups\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: grouped\noverlap: ${options.overlap ?? 'skip'}\n`,
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = t.worker();
  await worker.bootstrap();
  return { t, worker };
}

async function tickAt(t: TestRuntime, worker: Worker, at: string) {
  t.clock.set(Date.parse(at));
  await worker.heartbeat();
  return worker.tick();
}

async function outcomes(rt: Runtime) {
  const runs = await rt.repos.runs.listForScheduler(T, P, 'job', 10);
  return runs.map((r) => [r.outcome, r.reason]).reverse();
}

/** Every member started so far got SIGTERM and finished its cleanup, and none runs. */
function membersEnded() {
  const started = pidsOf('start member');
  expect(pidsOf('exit member').sort()).toEqual([...started].sort());
  for (const pid of [...started, ...pidsOf('start leader')]) expect(running(pid)).toBe(false);
}

// Issue #20 (No orphans), decisions §5 fencing: the whole process group of a run ends with the
// run — when its command exits, and on every stop: cancelPrevious, a stop request, a timeout,
// a shutdown — asserted from what the processes marked.
describe.each(DIALECTS)('a run’s process group never outlives the run, on %s (issue #20)', (dialect) => {
  it(
    'a command that exits leaving a background member: the member ends before the run does',
    SLOW,
    async () => {
      const { t, worker } = await setup(dialect, { mode: 'exit' });
      await tickAt(t, worker, '2026-06-01T08:00:10Z');
      await worker.executor.settled();
      expect(await outcomes(t.rt)).toEqual([['completed', null]]);
      membersEnded();
    },
  );

  it('cancelPrevious: the previous run’s whole group is gone before the next run starts', SLOW, async () => {
    const { t, worker } = await setup(dialect, { overlap: 'cancelPrevious' });
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    await until(() => pidsOf('start leader').length === 1, 'the first run started');
    await tickAt(t, worker, '2026-06-01T08:00:20Z');
    await until(() => pidsOf('start leader').length === 2, 'the second run started');
    expect(marks().filter((m) => m.kind === 'overlap')).toEqual([]);
    const [first, second] = pidsOf('start member');
    const firstExit = marks().find((m) => m.kind === 'exit member' && m.pid === first) as Mark;
    const secondStart = marks().find((m) => m.kind === 'start member' && m.pid === second) as Mark;
    expect(firstExit.ms).toBeLessThanOrEqual(secondStart.ms);
    expect(running(first as number)).toBe(false);
    await worker.stop();
    expect(await outcomes(t.rt)).toEqual([
      ['cancelled', 'scheduler-overlap'],
      ['cancelled', 'shutdown'],
    ]);
    membersEnded();
  });

  it('a stop request ends the whole group before the run’s end is recorded', SLOW, async () => {
    const { t, worker } = await setup(dialect);
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    await until(() => pidsOf('start leader').length === 1, 'the run started');
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
    await stopProcess(t.rt, T, run?.processId as string);
    await worker.reap();
    await worker.executor.settled();
    expect(await outcomes(t.rt)).toEqual([['cancelled', 'stopped']]);
    membersEnded();
  });

  it('a timeout ends the whole group before the run’s end is recorded', SLOW, async () => {
    const { t, worker } = await setup(dialect, { extra: 'timeout: PT1S' });
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    await worker.executor.settled();
    expect(await outcomes(t.rt)).toEqual([['failed', 'timeout after 1000 ms']]);
    membersEnded();
  });

  it('a shutdown ends every running group before the worker’s stop returns', SLOW, async () => {
    const { t, worker } = await setup(dialect, { shutdownGraceMs: 100 });
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    await until(() => pidsOf('start leader').length === 1, 'the run started');
    await worker.stop();
    expect(await outcomes(t.rt)).toEqual([['cancelled', 'shutdown']]);
    membersEnded();
  });

  it(
    'records the group while the run runs (host, boot, pid namespace, start time), and forgets it after',
    SLOW,
    async () => {
      const { t, worker } = await setup(dialect);
      const changes: RunningGroupChange[] = [];
      worker.executor.groups.subscribe((change) => changes.push(change));
      await tickAt(t, worker, '2026-06-01T08:00:10Z');
      await until(() => pidsOf('start leader').length === 1, 'the run started');
      const [leader] = pidsOf('start leader');
      const db = t.rt.repos.store.db;
      await until(async () => (await db.selectFrom('process_groups').selectAll().execute()).length === 1);
      const [row] = await db.selectFrom('process_groups').selectAll().execute();
      const stat = readFileSync(`/proc/${leader}/stat`, 'utf8');
      const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
      const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
      expect({
        ...row,
        pgid: Number(row?.pgid),
        leader_start_ticks: Number(row?.leader_start_ticks),
      }).toMatchObject({
        process_id: run?.processId,
        pgid: leader,
        worker_id: worker.id,
        boot_id: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
        leader_start_ticks: ticks,
        ended_at: null,
      });
      expect(worker.executor.groups.list()).toEqual([{ processId: run?.processId, pgid: leader }]);
      await worker.stop();
      expect(await db.selectFrom('process_groups').selectAll().execute()).toEqual([]);
      expect(changes.map((c) => c.kind)).toEqual(['added', 'removed']);
    },
  );
});

describe('workflow steps report their process groups (issue #20)', () => {
  it('a step’s group is added while it runs and removed when its engine returned', SLOW, async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/pid.yaml':
          'description: prints its pid\nengine: shell\ncommand: ["sh", "-c", "echo $$"]\n',
        '_vance/workflows/one.yaml': 'description: one step\nsteps:\n  - name: only\n    recipe: pid\n',
      }),
      T,
      P,
      libraryActor('alice'),
    );
    const groups = new RunningGroups();
    const changes: RunningGroupChange[] = [];
    groups.subscribe((change) => changes.push(change));
    const { done, run } = await new WorkflowRunner(t.rt, 'wrk_test', {
      calls: new EngineCalls(groups),
      lease: new LeaseGate(),
    }).start(T, P, 'one', {}, 'alice');
    expect((await done).status).toBe('completed');
    const stored = await t.rt.repos.workflowRuns.get(T, run.id);
    const step = stored?.steps[0];
    expect(changes).toEqual([
      { kind: 'added', group: { processId: step?.processId, pgid: Number(step?.output) } },
      { kind: 'removed', group: { processId: step?.processId, pgid: Number(step?.output) } },
    ]);
  });
});
