import type { KyselyPlugin } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import { SimulatedCrash } from '../../src/runtime/faults.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// Issue #20: a restarted worker spent minutes in its start-up reap, several queries per lost run
// one after another. A reap of N claimed runs of a dead worker costs a few queries for the lot,
// and still starts each run exactly once (decisions §5).

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
/** A worker counts as lost once its heartbeat is older than the lease and the takeover margin. */
const DEAD_AFTER = TTL + TAKEOVER_MARGIN_MS;
const COUNT = 60;

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

class Crash extends SimulatedCrash {}

/** Counts the statements sent through `t.store.db` from now on (every repository reads it there). */
function countQueries(t: TestRuntime): { readonly n: number } {
  const counter = { n: 0 };
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      counter.n++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const store = t.store as { db: TestRuntime['store']['db'] };
  store.db = store.db.withPlugin(plugin);
  return counter;
}

describe.each(DIALECTS)('a reap on %s of a dead worker’s claims (issue #20)', (dialect) => {
  it(`takes ${COUNT} claimed runs over in fewer queries than runs, and starts each once`, async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const files: Record<string, string> = {};
    for (let i = 0; i < COUNT; i++)
      files[`_vance/scheduler/job${i}.yaml`] = cronScheduler('*/10 * * * * *', 'noop');
    await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
    const dead = t.worker({
      leaseTtlMs: TTL,
      faults: { afterClaim: () => Promise.reject(new Crash('killed')) },
    });
    await dead.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await dead.heartbeat();
    await expect(dead.tick()).rejects.toBeInstanceOf(Crash);
    expect(await t.rt.repos.runs.inState('claimed', COUNT + 1)).toHaveLength(COUNT);
    t.clock.advance(DEAD_AFTER + 1);

    const worker = t.worker({ leaseTtlMs: TTL });
    const other = t.worker({ leaseTtlMs: TTL }, dialect === 'postgres' ? await t.peer() : t.rt);
    for (const w of [worker, other])
      await t.rt.repos.workers.register({ id: w.id, host: 'here', pid: 1, startedAt: t.clock.now() });
    const queries = countQueries(t);
    // Two workers reap the same claims at once: each run is taken over by one of them.
    const [mine, theirs] = await Promise.all([worker.reap(), other.reap()]);
    const reapQueries = queries.n;
    await Promise.all([worker.executor.settled(), other.executor.settled()]);

    expect(mine.resumed + theirs.resumed).toBe(COUNT);
    expect(reapQueries).toBeLessThan(COUNT);
    const ended = await t.rt.repos.runs.inState('ended', COUNT + 1);
    expect(ended.map((r) => r.outcome)).toEqual(Array(COUNT).fill('completed'));
    const starts = await t.store.db
      .selectFrom('feed')
      .select('trace_id')
      .where('kind', '=', 'START')
      .execute();
    expect(new Set(starts.map((s) => s.trace_id)).size).toBe(COUNT);
    expect(starts).toHaveLength(COUNT);
  }, 30_000);
});
