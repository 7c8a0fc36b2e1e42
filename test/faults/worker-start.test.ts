import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { claimedRunRow } from '../support/runs.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
/** More than the 100 a reap recovered before. */
const STRANDED = 150;
const P = 'ops';

let t: TestRuntime;
afterEach(async () => {
  vi.restoreAllMocks();
  await t.close();
});

async function project(count: number) {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`_vance/scheduler/s${i}.yaml`] = cronScheduler('0 * * * * *', 'noop');
  await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
}

// Issue #12, found by `npm run soak`: a worker whose store failed during start-up rejected start()
// and left its lease timer running, so `ursa worker` neither worked nor exited.
describe.each(DIALECTS)('a worker whose store fails while it starts, on %s (issue #12)', (dialect) => {
  it('retries the start-up with the loop backoff and then runs', async () => {
    t = await testRuntime('2026-06-01T08:00:30Z', { dialect });
    await project(1);
    // The reap's first read of lost workers' work fails twice.
    const lost = vi.spyOn(t.rt.repos.runs, 'orphaned');
    lost
      .mockRejectedValueOnce(new Error('connection terminated'))
      .mockRejectedValueOnce(new Error('timeout'));
    const worker = t.worker({ maxSleepMs: 20 });
    await worker.start();
    expect(lost.mock.calls.length).toBeGreaterThanOrEqual(3);
    t.clock.set(Date.parse('2026-06-01T08:01:00Z'));
    await until(
      async () => (await t.rt.repos.runs.listForScheduler(T, P, 's0', 10)).some((r) => r.state === 'ended'),
      'the started worker fires',
    );
    await worker.stop();
    expect((await t.rt.repos.runs.listForScheduler(T, P, 's0', 10)).map((r) => r.outcome)).toEqual([
      'completed',
    ]);
  });

  it('stops while its start-up still fails, with no loop left behind', async () => {
    t = await testRuntime('2026-06-01T08:00:30Z', { dialect });
    await project(1);
    const lost = vi.spyOn(t.rt.repos.runs, 'orphaned').mockRejectedValue(new Error('connection refused'));
    const worker = t.worker({ maxSleepMs: 20 });
    const starting = worker.start();
    await until(async () => lost.mock.calls.length >= 2, 'start-up retries');
    lost.mockRestore();
    const ticks = vi.spyOn(worker, 'tick');
    await worker.stop();
    await starting;
    t.clock.set(Date.parse('2026-06-01T08:01:00Z'));
    // Nothing claims once stopped: the occurrence stays due.
    expect(ticks).not.toHaveBeenCalled();
    expect(await t.rt.repos.runs.listForScheduler(T, P, 's0', 10)).toEqual([]);
  });
});

describe.each(DIALECTS)('a worker recovering its own stranded claims, on %s (issue #12)', (dialect) => {
  it('dispatches a whole claim of stranded runs in one pass, not 100 of them', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await project(STRANDED);
    const worker = t.worker();
    await worker.bootstrap();
    // A claim of more than 100 that a store error cut short before any was dispatched.
    const due = Date.parse('2026-06-01T08:00:00Z');
    await t.store.db
      .insertInto('runs')
      .values(
        Array.from({ length: STRANDED }, (_, i) => ({
          ...claimedRunRow({ tenant: T, project: P, name: `s${i}` }, `run_${i}`, due),
          worker_id: worker.id,
        })),
      )
      .execute();
    expect(await worker.reap()).toMatchObject({ resumed: STRANDED });
    await worker.executor.settled();
    const ended = await t.store.db
      .selectFrom('runs')
      .select('outcome')
      .where('state', '=', 'ended')
      .execute();
    expect(ended).toHaveLength(STRANDED);
    expect(new Set(ended.map((r) => r.outcome))).toEqual(new Set(['completed']));
  }, 30_000);
});
