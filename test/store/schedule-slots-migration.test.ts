import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { slotOf } from '../../src/decisions/partition.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { migrate, openStore, type Store } from '../../src/store/open.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';

// Issue #24: migration 0024-schedule-slots gives the schedulers a store already holds their slot,
// page by page, as `Schedules.upsert` gives new ones; down and up again.
describe.each(DIALECTS)('migration 0024-schedule-slots on %s (issue #24)', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it('writes the slot of every existing scheduler, over more than one page', async () => {
    database = await freshDatabase(dialect);
    store = await openStore(database.location);
    const migrator = new Migrator({ db: store.db, provider: migrationsFor(store.dialect) });
    expect((await migrator.migrateTo('0023-runs-active-index')).error).toBeUndefined();
    const keys = Array.from({ length: 6_000 }, (_, i) => ({
      tenant: i % 3 === 0 ? 'acme' : 'zeta',
      project: `p${i % 7}`,
      name: `s${i}`,
    }));
    for (let i = 0; i < keys.length; i += 500) {
      await store.db
        .insertInto('schedule_state')
        .values(
          keys.slice(i, i + 500).map((k) => ({
            ...k,
            source: 'project',
            document_version: 1,
            next_run_at: 0,
            last_scheduled_at: null,
            updated_at: 0,
            timing: null,
          })),
        )
        .execute();
    }
    await migrate(store);
    const rows = await store.db
      .selectFrom('schedule_state')
      .select(['tenant', 'project', 'name', 'slot'])
      .execute();
    expect(rows).toHaveLength(keys.length);
    expect(rows.filter((r) => Number(r.slot) !== slotOf(r))).toEqual([]);
    expect(new Set(rows.map((r) => Number(r.slot))).size).toBe(64);
    expect((await migrator.migrateTo('0023-runs-active-index')).error).toBeUndefined();
    await migrate(store);
    const again = await store.db
      .selectFrom('schedule_state')
      .select(['tenant', 'project', 'name', 'slot'])
      .execute();
    expect(again.filter((r) => Number(r.slot) !== slotOf(r))).toEqual([]);
  });
});
