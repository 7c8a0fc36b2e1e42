import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LEASE_LOST } from '../../src/fencing/lease.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5 fencing): the main thread's self-fence ends every process group before
// the lease expires on its own, without the watchdog thread: SIGTERM at the fence, SIGKILL after
// the fence's grace (1 s by default), not after the shell engine's own stop grace (2 s), which
// would land past the lease. A scheduler run's group and a workflow step's alike.

const T = 'acme';
const P = 'ops';
const SLOW = { timeout: 30_000 };
const GRACE_MS = 300;
/** The shell engine's own grace between SIGTERM and SIGKILL (its default). */
const ENGINE_GRACE_MS = 2000;
// Marks `start <pid>`, and `term <pid> <ms>` at each SIGTERM, which it survives: only SIGKILL ends it.
const STUBBORN = [
  `trap 'echo "term $$ $(date +%s%3N)" >> "$URSA_PARAM_MARKS"' TERM`,
  'echo "start $$ $(date +%s%3N)" >> "$URSA_PARAM_MARKS"',
  'while :; do sleep 0.05; done',
].join('\n');

let t: TestRuntime | undefined;
let dir = '';
afterEach(async () => {
  for (const pid of pidsOf('start')) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  await t?.close();
  t = undefined;
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function pidsOf(kind: string): number[] {
  const file = join(dir, 'marks');
  if (dir === '' || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${kind} `))
    .map((line) => Number(line.split(' ')[1]));
}

/** Whether `pid` runs (a zombie has exited: it only waits for its parent). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

describe.each(DIALECTS)(
  'the main thread’s self-fence kills with the fence’s grace, on %s (issue #20)',
  (dialect) => {
    it(
      'a run’s and a workflow step’s groups that ignore SIGTERM get SIGKILL after the fence grace, not the engine’s',
      SLOW,
      async () => {
        t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
        dir = mkdtempSync(join(tmpdir(), 'ursa-fence-grace-'));
        await applyDirectory(
          t.rt,
          projectFolder({
            '_vance/recipes/stubborn.yaml': shellRecipe(STUBBORN, { marks: join(dir, 'marks') }),
            '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'stubborn'),
            '_vance/workflows/flow.yaml':
              'description: one step\nsteps:\n  - name: only\n    recipe: stubborn\n',
          }),
          T,
          P,
          libraryActor('alice'),
        );
        const worker = t.worker();
        await worker.bootstrap();
        t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
        await worker.tick();
        const { done } = await worker.executor.workflows.start(T, P, 'flow', {}, 'alice');
        await until(() => pidsOf('start').length === 2, 'the run and the step started');
        const pids = pidsOf('start');

        // The fence as SelfFence does it: the gate closes, every run and step is stopped.
        const fencedAt = performance.now();
        worker.executor.lease.fence();
        worker.executor.stopAll(LEASE_LOST, GRACE_MS);
        const goneAfter = new Map<number, number>();
        await until(() => {
          for (const pid of pids)
            if (!goneAfter.has(pid) && !running(pid)) goneAfter.set(pid, performance.now() - fencedAt);
          return goneAfter.size === pids.length;
        }, 'both groups ended');

        // Each got SIGTERM first (and survived it), then SIGKILL once the fence's grace was over.
        expect(pidsOf('term').sort()).toEqual([...pids].sort());
        for (const pid of pids) {
          expect(goneAfter.get(pid)).toBeGreaterThanOrEqual(GRACE_MS);
          // Well before the engine's own SIGKILL (a busy machine may notice the end late).
          expect(goneAfter.get(pid)).toBeLessThan(ENGINE_GRACE_MS - 500);
        }
        await worker.executor.settled();
        expect(await done).toEqual({ status: 'cancelled', reason: `step only: ${LEASE_LOST}` });
        const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
        expect([run?.outcome, run?.reason]).toEqual(['cancelled', LEASE_LOST]);
      },
    );
  },
);
