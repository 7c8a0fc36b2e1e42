import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { Lanes } from '../../src/store/lanes.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { migrate, openStore, type Store } from '../../src/store/open.js';
import { Runs } from '../../src/store/runs.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';
import { claimedRunRow } from '../support/runs.js';

// Issue #20: migration 0013-run-fencing on a store that already holds runs, on both dialects — a
// run that started before it counts one attempt without a token, one not started counts none, and
// the next start takes a token and its attempt as every start does.

const KEY = { tenant: 'acme', project: 'ops', name: 'job' };

describe.each(DIALECTS)('migration 0013-run-fencing on %s (issue #20)', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it('counts one attempt for a run started before it, none for one not started; down and up again', async () => {
    database = await freshDatabase(dialect);
    store = await openStore(database.location);
    const migrator = new Migrator({ db: store.db, provider: migrationsFor(store.dialect) });
    const down = await migrator.migrateTo('0012-process-groups');
    expect(down.error).toBeUndefined();
    expect(down.results?.at(-1)).toMatchObject({ migrationName: '0013-run-fencing', direction: 'Down' });
    // Rows as 0012 left them: without the columns of 0013 and later (0019's lane links).
    const later = ['attempt', 'fencing_token', 'queued_at', 'waiting_behind', 'folded_into'];
    const as0012 = (row: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(row).filter(([column]) => !later.includes(column)));
    const claimed = as0012(claimedRunRow(KEY, 'run_claimed', 1_000));
    const started = as0012(claimedRunRow(KEY, 'run_started', 2_000));
    await store.db
      .insertInto('runs')
      .values([claimed, { ...started, state: 'started', started_at: 2_000, process_id: 'proc_1' }] as never)
      .execute();
    await migrate(store);

    const runs = new Runs(store);
    expect(await runs.get('run_started')).toMatchObject({ state: 'started', attempt: 1, fencingToken: null });
    expect(await runs.get('run_claimed')).toMatchObject({ state: 'claimed', attempt: 0, fencingToken: null });
    // The run started before the migration can still be ended by its worker (no token to match).
    const before = (await runs.get('run_started')) as NonNullable<Awaited<ReturnType<Runs['get']>>>;
    const ended = await runs.endMany([
      {
        run: { ...before, state: 'ended', outcome: 'completed', endedAt: 3_000 },
        process: undefined,
        line: {
          tenant: 'acme',
          project: 'ops',
          at: 3_000,
          kind: 'END',
          ref_type: 'SCHEDULER',
          ref_id: 'job',
          trace_id: 'run_started',
          outcome: 'completed',
          log_path: before.logPath,
          payload: '{}',
        },
        log: undefined,
      },
    ]);
    expect(ended).toEqual(new Set(['run_started']));
    // The first start after it takes a token, as every start does (its scheduler still registered).
    await store.db
      .insertInto('schedule_state')
      .values({
        ...KEY,
        source: 'project',
        document_version: 1,
        next_run_at: null,
        last_scheduled_at: 1_000,
        updated_at: 1_000,
        timing: null,
      })
      .execute();
    const result = await new Lanes(store).admit({
      key: KEY,
      correlationId: 'run_claimed',
      workerId: 'wrk_test',
      policy: 'skip',
      oneShot: false,
      trigger: 'cron',
      scheduledFor: 1_000,
      start: { sessionId: null, processId: null, at: 4_000 },
    });
    expect(result).toMatchObject({ decision: 'start', attempt: { attempt: 1, fencingToken: 1 } });
    expect(await runs.get('run_claimed')).toMatchObject({ attempt: 1, fencingToken: 1 });
  });
});
