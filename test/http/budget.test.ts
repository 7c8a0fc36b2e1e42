import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { effectiveSetting, setSetting } from '../../src/service/settings.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { tempDir } from '../support/temp.js';

// Issue #22 item 7: a project's run budget (scheduler.budget.runsPerHour / runsPerDay in the
// settings cascade), over rolling windows of started runs, with several workers on PostgreSQL.

const BASE = '/brain/acme/project/ops/scheduler';
const at = (text: string) => Date.parse(text);

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('run budget on %s (issue #22)', (dialect) => {
  it('starts no more runs than the rolling hour and day allow, with several workers; the rest are skipped_budget', async () => {
    a = await testApp(dialect);
    const t = a;
    const marks = join(tempDir('ursa-budget-'), 'marks');
    const names = ['a', 'b', 'c', 'd'];
    const entries = await applyDirectory(
      t.t.rt,
      projectFolder({
        '_vance/recipes/mark.yaml': shellRecipe(`echo "$URSA_CORRELATION_ID" >> ${marks}`),
        ...Object.fromEntries(
          names.map((n) => [
            `_vance/scheduler/${n}.yaml`,
            cronScheduler('0 0 * * * *', 'mark', 'overlap: queue\n'),
          ]),
        ),
      }),
      'acme',
      'ops',
      libraryActor('wes'),
    );
    expect(entries.every((e) => e.status === 'created')).toBe(true);
    const now = t.t.clock.now();
    // 3 an hour on the project itself, 5 a day for every project of the tenant (the cascade).
    await setSetting(
      t.t.rt,
      { tenant: 'acme', scope: 'project', subject: 'ops', key: 'scheduler.budget.runsPerHour', value: '3' },
      now,
    );
    await setSetting(
      t.t.rt,
      {
        tenant: 'acme',
        scope: 'project',
        subject: '_tenant',
        key: 'scheduler.budget.runsPerDay',
        value: '5',
      },
      now,
    );
    const effective = (key: string) =>
      effectiveSetting(t.t.rt, { tenant: 'acme', scope: 'project', subject: 'ops', key }, 7, {
        runsPerHour: 100,
        runsPerDay: undefined,
      });
    expect(await effective('scheduler.budget.runsPerHour')).toEqual({
      value: '3',
      from: 'setting project/ops',
    });
    expect(await effective('scheduler.budget.runsPerDay')).toEqual({
      value: '5',
      from: 'setting project/_tenant',
    });
    // PostgreSQL: three connections, as three worker processes; SQLite's share one (decisions §5).
    const runtimes =
      dialect === 'postgres' ? [t.t.rt, await t.t.peer(), await t.t.peer()] : [t.t.rt, t.t.rt, t.t.rt];
    const workers = runtimes.map((rt) => t.t.worker({}, rt));
    for (const w of workers) await w.bootstrap();
    const settle = async () => {
      await Promise.all(workers.map((w) => w.reap()));
      await Promise.all(workers.map((w) => w.executor.settled()));
    };
    const outcomes = async (since: number) =>
      (
        await t.t.store.db
          .selectFrom('runs')
          .select(['outcome', 'reason'])
          .where('claimed_at', '>=', since)
          .execute()
      )
        .map((r) => `${r.outcome}${r.reason === null ? '' : `:${r.reason}`}`)
        .sort();

    // 09:00: four runs due at once, three of them start; then a manual fire in the same hour.
    t.t.clock.set(at('2026-06-01T09:00:00Z'));
    await Promise.all(workers.map((w) => w.tick()));
    await settle();
    t.t.clock.set(at('2026-06-01T09:20:00Z'));
    expect((await t.request('POST', `${BASE}/a/fire`, t.tokens.write)).statusCode).toBe(202);
    await settle();
    expect(await outcomes(at('2026-06-01T09:00:00Z'))).toEqual([
      'completed',
      'completed',
      'completed',
      'skipped_budget:runs-per-hour',
      'skipped_budget:runs-per-hour',
    ]);
    // 10:00: the hour has room again (the 09:00 starts are an hour old), the day only for two.
    t.t.clock.set(at('2026-06-01T10:00:00Z'));
    await Promise.all(workers.map((w) => w.tick()));
    await settle();
    expect(await outcomes(at('2026-06-01T10:00:00Z'))).toEqual([
      'completed',
      'completed',
      'skipped_budget:runs-per-day',
      'skipped_budget:runs-per-day',
    ]);
    // What the processes did: five ran, no more.
    expect(readFileSync(marks, 'utf8').trim().split('\n')).toHaveLength(5);

    // A SKIPPED line says which limit refused the run; wes hears once per window and limit.
    const skipped = await t.t.store.db
      .selectFrom('feed')
      .select(['outcome', 'payload'])
      .where('kind', '=', 'SKIPPED')
      .execute();
    expect(skipped.map((l) => JSON.parse(l.payload)).filter((p) => p.reason === 'runs-per-hour')).toEqual([
      expect.objectContaining({ runsPerHour: 3 }),
      expect.objectContaining({ runsPerHour: 3 }),
    ]);
    const inbox = (await t.request('GET', '/brain/acme/inbox', t.tokens.write)).json();
    expect(
      inbox.items
        .filter((i: { kind: string }) => i.kind === 'budget-exceeded')
        .map((i: { title: string }) => i.title)
        .sort(),
    ).toEqual([
      'ops reached its budget of 3 runs per hour (from 2026-06-01T09:00:00Z)',
      'ops reached its budget of 5 runs per day (from 2026-06-01T00:00:00Z)',
    ]);
    // Lifting the hour's limit in the project (0) leaves the tenant's day limit in force.
    await setSetting(
      t.t.rt,
      { tenant: 'acme', scope: 'project', subject: 'ops', key: 'scheduler.budget.runsPerHour', value: '0' },
      now,
    );
    t.t.clock.set(at('2026-06-01T10:30:00Z'));
    expect((await t.request('POST', `${BASE}/b/fire`, t.tokens.write)).statusCode).toBe(202);
    await settle();
    expect(await outcomes(at('2026-06-01T10:30:00Z'))).toEqual(['skipped_budget:runs-per-day']);
    for (const w of workers) await w.stop();
  });
});
