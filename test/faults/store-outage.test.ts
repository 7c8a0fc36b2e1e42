import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import type { Store } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { iso } from '../support/cases.js';
import type { TestDatabase } from '../support/dialects.js';
import {
  capturedLog,
  coverage,
  expectStartedAndEndedOnce,
  proxiedPostgres,
  runtimeOn,
  type TcpProxy,
} from '../support/faults.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
const START = Date.parse('2026-06-01T08:00:00Z');
const at = (second: number) => START + second * 1000;
const NAMES = ['a', 'b', 'c'];

let database: TestDatabase | undefined;
let proxy: TcpProxy | undefined;
const stores: Store[] = [];
let worker: Worker | undefined;
afterEach(async () => {
  proxy?.restore();
  await worker?.stop();
  for (const store of stores.splice(0)) await store.close();
  await proxy?.close();
  await database?.drop();
  worker = proxy = database = undefined;
});

/** A fresh PostgreSQL database, a proxy in front of its server, and a store on either side. */
async function setup() {
  const opened = await proxiedPostgres();
  ({ database, proxy } = opened);
  stores.push(opened.direct, opened.proxied);
  return opened;
}

/** The runs of every scheduler, oldest first. */
function runsOf(store: Store) {
  return store.db.selectFrom('runs').selectAll().orderBy('scheduled_for').orderBy('name').execute();
}

// issue #12, decisions §4, §5: PostgreSQL goes away for longer than 30 s of the schedule and comes back.
describe('PostgreSQL unavailable during a run of schedules (issue #12)', () => {
  it('logs, backs off and reconnects; every occurrence is a run or coalesced into one, none twice', {
    timeout: 60_000,
  }, async () => {
    const { proxy, direct, proxied } = await setup();
    const clock = fixedClock(at(0) + 500);
    const files: Record<string, string> = {};
    for (const name of NAMES) files[`_vance/scheduler/${name}.yaml`] = cronScheduler('* * * * * *', 'noop');
    await applyDirectory(runtimeOn(direct, clock), projectFolder(files), T, P, libraryActor('alice'));
    const { log, lines } = capturedLog('warn');
    // The real loop, on a clock the test steps: short sleeps, so each step is seen within milliseconds.
    worker = new Worker(runtimeOn(proxied, clock, log), { acquireAheadMs: 0, maxSleepMs: 20 });
    await worker.start();

    const endedAt = async (second: number) => {
      const runs = await runsOf(direct);
      return NAMES.every((name) =>
        runs.some(
          (r) =>
            r.name === name &&
            r.state === 'ended' &&
            (Number(r.scheduled_for) === at(second) || Number(r.coalesced_until) === at(second)),
        ),
      );
    };
    for (let s = 1; s <= 5; s++) {
      clock.set(at(s));
      await until(() => endedAt(s), `the runs of second ${s}`);
    }

    // The server goes away right as second 6 falls due, and stays away for 35 s of the schedule.
    clock.set(at(6));
    proxy.cut();
    // The outage is dated by the first failed pass: it must fail before the clock moves on.
    const failed = () => lines.some((l) => l.msg === 'scheduler loop error; retrying');
    await until(failed, 'the first failed pass');
    for (let s = 6; s <= 40; s++) {
      clock.set(at(s));
      const refused = proxy.refused;
      await until(() => proxy.refused > refused, `a reconnect attempt at second ${s}`);
    }
    expect((await runsOf(direct)).some((r) => Number(r.scheduled_for) > at(6))).toBe(false);

    // Back at second 41: one catch-up per scheduler, coalesced up to 41 (decisions §4), then on time.
    clock.set(at(41));
    proxy.restore();
    await until(() => endedAt(41), 'the catch-up runs');
    // The recovery is logged at the end of the pass that ran them: before the clock moves on.
    await until(() => lines.some((l) => l.msg === 'scheduler loop recovered'), 'the logged recovery');
    for (let s = 42; s <= 44; s++) {
      clock.set(at(s));
      await until(() => endedAt(s), `the runs of second ${s}`);
    }
    await worker.stop();
    worker = undefined;

    const runs = await runsOf(direct);
    expect(coverage(runs, NAMES, at(1), at(44), 1000)).toEqual({ missing: [], doubled: [] });
    expect(runs.filter((r) => r.state !== 'ended')).toEqual([]);
    for (const name of NAMES) {
      const catchUps = runs.filter((r) => r.name === name && Number(r.coalesced) === 1);
      expect(catchUps.map((r) => [r.outcome, iso(Number(r.coalesced_until))])).toEqual([
        ['completed', '2026-06-01T08:00:41Z'],
      ]);
      // Second 6 is served by its own run (claimed just before the cut) or by the catch-up.
      expect(['2026-06-01T08:00:06Z', '2026-06-01T08:00:07Z']).toContain(
        iso(Number(catchUps[0]?.scheduled_for)),
      );
    }
    // A run the cut caught half-way is ended, never left running nor run again.
    for (const run of runs.filter((r) => r.outcome !== 'completed')) {
      expect([iso(Number(run.scheduled_for)), run.outcome]).toEqual(['2026-06-01T08:00:06Z', 'failed']);
    }
    // Each START and END once per run.
    await expectStartedAndEndedOnce(direct, runs);

    // Logged: the failure, at the 1st, 2nd, 4th, 8th … failed pass (not once per pass), and the recovery.
    const failures = lines.filter((l) => l.msg === 'scheduler loop error; retrying').map((l) => l.failures);
    expect(failures.slice(0, 4)).toEqual([1, 2, 4, 8]);
    for (const n of failures) expect(Math.log2(n as number) % 1).toBe(0);
    const [recovered] = lines.filter((l) => l.msg === 'scheduler loop recovered');
    // Many passes failed (the proxy's count of refused connections also holds the heartbeats' and LISTEN's).
    expect(recovered?.failures as number).toBeGreaterThan(8);
    expect(recovered?.failures as number).toBeLessThan(2 * (failures.at(-1) as number));
    expect(recovered?.downMs).toBe(at(41) - at(6));
  });

  it('hears change notifications again after the outage (LISTEN reconnects)', async () => {
    const { proxy, direct, proxied } = await setup();
    let heard = 0;
    const unsubscribe = await proxied.onChange(() => {
      heard++;
    });
    await direct.notifyChange();
    await until(() => heard === 1, 'the first notification');
    proxy.cut();
    await until(() => proxy.refused >= 2, 'two attempts to listen again');
    proxy.restore();
    // Listening again, it reports a change once: one may have been announced while it was deaf.
    await until(() => heard === 2, 'the wake-up on reconnect');
    await direct.notifyChange();
    await until(() => heard === 3, 'a notification after the outage');
    await unsubscribe();
    await direct.notifyChange();
    await direct.notifyChange();
    expect(heard).toBe(3);
  });
});
