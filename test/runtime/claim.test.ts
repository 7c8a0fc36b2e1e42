import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { claimedRunRow } from '../support/runs.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

let t: TestRuntime;
afterEach(() => t.close());

const T = 'acme';
const P = 'ops';
const key = { tenant: T, project: P, name: 'race' };

function run(correlationId: string, scheduledFor: number) {
  return claimedRunRow(key, correlationId, scheduledFor);
}

// decisions §4: a claim is a compare-and-swap plus the run row, in one transaction.
describe.each(DIALECTS)('claiming an occurrence on %s (decisions §4)', (dialect) => {
  it('lets exactly one of two racing claims win, leaving one run row', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const due = Date.parse('2026-06-01T08:00:00Z');
    const schedules = t.rt.repos.schedules;
    await schedules.upsert(
      { ...key, source: 'project', documentVersion: 1, nextRunAt: due, lastScheduledAt: null, timing: null },
      due,
    );
    const swap = { expectedNextRunAt: due, expectedLastScheduledAt: null, nextRunAt: due + 10_000, now: due };
    // Both claimants saw the same state; SQLite serialises their transactions on the one connection
    // a process has (decisions §5), so the second compare-and-swap finds the state moved.
    const results = await Promise.all([
      schedules.claim(key, swap, run('run_a', due)),
      schedules.claim(key, swap, run('run_b', due)),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const rows = await t.store.db.selectFrom('runs').select(['correlation_id', 'scheduled_for']).execute();
    expect(rows).toHaveLength(1);
    expect(await schedules.get(key)).toMatchObject({ nextRunAt: due + 10_000, lastScheduledAt: due });
  });

  it('refuses a second run of the same occurrence even when the state was reset, and moves the state past it', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const due = Date.parse('2026-06-01T08:00:00Z');
    const schedules = t.rt.repos.schedules;
    const state = {
      ...key,
      source: 'project' as const,
      documentVersion: 1,
      nextRunAt: due,
      lastScheduledAt: null,
      timing: null,
    };
    await schedules.upsert(state, due);
    const swap = { expectedNextRunAt: due, expectedLastScheduledAt: null, nextRunAt: due + 10_000, now: due };
    expect(await schedules.claim(key, swap, run('run_a', due))).toBe(true);
    await schedules.upsert(state, due);
    expect(await schedules.claim(key, swap, run('run_b', due))).toBe(false);
    // No second run, and the schedule is not left stuck on an occurrence it can never claim.
    expect(await schedules.get(key)).toMatchObject({ nextRunAt: due + 10_000, lastScheduledAt: due });
    expect(await t.store.db.selectFrom('runs').select('correlation_id').execute()).toEqual([
      { correlation_id: 'run_a' },
    ]);
  });

  it('writes nothing for a claim made from a stale view of the state', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const due = Date.parse('2026-06-01T08:00:00Z');
    const schedules = t.rt.repos.schedules;
    await schedules.upsert(
      { ...key, source: 'project', documentVersion: 1, nextRunAt: due, lastScheduledAt: null, timing: null },
      due,
    );
    const fresh = {
      expectedNextRunAt: due,
      expectedLastScheduledAt: null,
      nextRunAt: due + 10_000,
      now: due,
    };
    expect(await schedules.claim(key, fresh, run('run_a', due))).toBe(true);
    // A claimer still believing the old lastScheduledAt, for the next occurrence: the swap must fail.
    const stale = {
      expectedNextRunAt: due + 10_000,
      expectedLastScheduledAt: null,
      nextRunAt: due + 20_000,
      now: due,
    };
    expect(await schedules.claim(key, stale, run('run_b', due + 10_000))).toBe(false);
    expect(await schedules.get(key)).toMatchObject({ nextRunAt: due + 10_000, lastScheduledAt: due });
    expect(await t.store.db.selectFrom('runs').select('correlation_id').execute()).toEqual([
      { correlation_id: 'run_a' },
    ]);
  });

  it('fires a due scheduler once when two tickers race at the same instant', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/noop-echo.yaml': shellRecipe('true'),
        '_vance/scheduler/race.yaml': cronScheduler('*/10 * * * * *', 'noop-echo'),
      }),
      T,
      P,
      libraryActor('alice'),
    );
    const a = new Worker(t.rt);
    const b = new Worker(t.rt);
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    const [ra, rb] = await Promise.all([a.tick(), b.tick()]);
    await Promise.all([a.executor.settled(), b.executor.settled()]);
    expect(ra.claimed + rb.claimed).toBe(1);
    expect(ra.fired + rb.fired).toBe(1);
    const runs = await t.rt.repos.runs.listForScheduler(T, P, 'race', 10);
    expect(runs.map((r) => r.outcome)).toEqual(['completed']);
  });
});
