import { CompiledQuery } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

let t: TestRuntime;
const DUE = 400;
afterEach(() => t.close());

/** A statement as the store executed it. */
interface Executed {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

// Issue #11: the batched statements join their rows to a table through a `(values …)` list. With
// cast values SQLite materialized the list and scanned the whole table once per row: 1,000 claims
// against 10,000 schedule states took a second. SQLite-only: the planner under test is SQLite's.
describe('the batched claim, start and end statements on SQLite (issue #11)', () => {
  it('look every row of their values list up by the key of the table they join, never scan it', async () => {
    const executed: Executed[] = [];
    t = await testRuntime('2026-06-01T08:00:00Z', {
      store: { onQuery: (sql, parameters) => executed.push({ sql, parameters }) },
    });
    const files: Record<string, string> = {};
    // SQLite's planner chose the scan from a few hundred rows of values on.
    for (let i = 0; i < DUE; i++) files[`_vance/scheduler/s${i}.yaml`] = cronScheduler('0 * * * * *', 'noop');
    const applied = await applyDirectory(t.rt, projectFolder(files), 'acme', 'ops', libraryActor('alice'));
    expect(applied.filter((e) => e.status === 'created')).toHaveLength(DUE);
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:01:00Z'));
    expect(await worker.tick()).toMatchObject({ claimed: DUE, fired: DUE });
    await worker.executor.settled();

    const joins = executed.filter((q) => /^\s*update\b/.test(q.sql) && /\bfrom \(values\b/.test(q.sql));
    const targets = joins.map((q) => /^\s*update (\w+)/.exec(q.sql)?.[1]);
    // The claim's compare-and-swap, the start (with its processes and START lines), and the end of
    // runs, then of the processes of the runs it ended (issue #20: only those).
    expect(targets).toEqual(['schedule_state', 'runs', 'runs', 'processes']);
    for (const [i, q] of joins.entries()) {
      const plan = await t.store.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]),
      );
      const details = plan.rows.map((r) => r.detail);
      // The list is the outer loop; each of its rows finds its one row of the table by key.
      const outer = details.findIndex((d) => /^SCAN (\d+-ROW VALUES CLAUSE|\d+ CONSTANT ROWS)$/.test(d));
      // By its primary key, or (schedule_state, issue #24) by the index on its next occurrence and
      // key, every column of it equal: the one row either way.
      const key = new RegExp(
        `^SEARCH ${targets[i]} USING (COVERING )?INDEX (sqlite_autoindex_${targets[i]}_1 \\(|` +
          'schedule_state_upcoming \\(next_run_at=\\? AND tenant=\\? AND project=\\? AND name=\\?\\))',
      );
      const byKey = details.findIndex((d) => key.test(d));
      expect({ outer: outer >= 0, byKey: byKey > outer }, `${q.sql}\n${details.join('\n')}`).toEqual({
        outer: true,
        byKey: true,
      });
      expect(
        details.filter((d) => /^SCAN (schedule_state|runs|processes)\b/.test(d)),
        q.sql,
      ).toEqual([]);
    }
  });
});
