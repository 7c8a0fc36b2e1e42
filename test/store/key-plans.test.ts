import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const DUE = 300;
const HISTORY = 60_000;

/** A statement as the store executed it. */
interface Executed {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

// Issue #24 (a top of the hour on PostgreSQL): the tables grow by thousands of rows a second, and
// on statistics gathered before that the planner read the whole of `runs` to start a batch of a
// thousand runs by their keys (a sequential scan in every start), `schedule_state` for a claim's
// compare-and-swap, and the index of every active process to end a batch.
describe('the batched claim, start and end statements on PostgreSQL (issue #24)', () => {
  it('look their rows up by key on statistics that predate the rows, and are never compiled', async () => {
    const executed: Executed[] = [];
    t = await testRuntime('2026-06-01T08:00:00Z', {
      dialect: 'postgres',
      store: { onQuery: (text, parameters) => executed.push({ sql: text, parameters }) },
    });
    const db = t.store.db;
    const files: Record<string, string> = {};
    for (let i = 0; i < DUE; i++) files[`_vance/scheduler/s${i}.yaml`] = cronScheduler('0 * * * * *', 'noop');
    await applyDirectory(t.rt, projectFolder(files), 'acme', 'ops', libraryActor('alice'));
    // Statistics of small tables, kept while the history grows past them.
    for (const table of ['runs', 'schedule_state', 'processes'])
      await sql`alter table ${sql.table(table)} set (autovacuum_enabled = false)`.execute(db);
    await sql`analyze runs, schedule_state, processes`.execute(db);
    await sql`insert into runs (correlation_id, tenant, project, name, scheduled_for, trigger, coalesced,
        claimed_at, state, outcome, run_as, log_path, lock_mode, attempt)
      select 'run_old_' || i, 'acme', 'ops', 's' || (i % ${DUE}), i, 'cron', 0, i, 'ended', 'success',
        'alice', 'runs/old-' || i || '.md', 'none', 1
      from generate_series(1, ${HISTORY}) as i`.execute(db);

    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:01:00Z'));
    expect(await worker.tick()).toMatchObject({ claimed: DUE, fired: DUE });
    await worker.executor.settled();

    const keyed = executed.filter((q) =>
      /^\s*update (schedule_state|runs|processes)\b[\s\S]*\bfrom \(select \* from unnest/.test(q.sql),
    );
    expect(keyed.map((q) => /^\s*update (\w+)/.exec(q.sql)?.[1])).toEqual([
      'schedule_state',
      'runs',
      'runs',
      'processes',
    ]);
    // Each ran in a transaction that first set the planner to key lookups.
    for (const q of keyed) {
      const before = executed.slice(0, executed.indexOf(q)).reverse();
      const setting = before.findIndex((e) => e.sql.includes("set_config('enable_seqscan', 'off', true)"));
      const transactionStart = before.findIndex((e) => e !== q && !/^\s*(select|update|insert)/.test(e.sql));
      expect(setting, q.sql).toBeGreaterThanOrEqual(0);
      expect(transactionStart === -1 || setting < transactionStart, q.sql).toBe(true);
    }
    const plan = async (q: Executed, keyed: boolean) =>
      db.transaction().execute(async (trx) => {
        if (keyed)
          await sql`select set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)`.execute(
            trx,
          );
        const rows = await trx.executeQuery<{ 'QUERY PLAN': string }>(
          CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]),
        );
        return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    // Without the setting the stale statistics choose a scan of the whole history: the case is real.
    const start = keyed[1] as Executed;
    expect(await plan(start, false)).toMatch(/Seq Scan on runs/);
    for (const q of keyed) {
      const text = await plan(q, true);
      expect(text, q.sql).not.toMatch(/Seq Scan on (runs|schedule_state|processes)\b/);
      expect(text, q.sql).not.toMatch(/processes_status|runs_state|JIT/);
    }
  });
});
