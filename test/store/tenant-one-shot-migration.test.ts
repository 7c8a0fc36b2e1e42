import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { migrate, openStore, type Store } from '../../src/store/open.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';

// Issue #20, decisions §5: migration 0014-tenant-one-shots on a store that already holds tenant
// one-shots — registered ones and fired ones count as known at their instant, so that a project
// that becomes active after the upgrade does not run them as a catch-up.
describe.each(DIALECTS)('migration 0014-tenant-one-shots on %s (issue #20)', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it('records the tenant one-shots registered or fired before it as known at their instant; down and up again', async () => {
    database = await freshDatabase(dialect);
    store = await openStore(database.location);
    const migrator = new Migrator({ db: store.db, provider: migrationsFor(store.dialect) });
    const down = await migrator.migrateTo('0011-store-owner');
    expect(down.error).toBeUndefined();
    expect(down.results?.every((r) => r.direction === 'Down' && r.status === 'Success')).toBe(true);
    const at = Date.parse('2026-06-01T08:30:00Z');
    const db = store.db;
    await db
      .insertInto('schedule_state')
      .values([
        // A registered tenant one-shot, a tenant cron and a project one-shot.
        {
          tenant: 'acme',
          project: 'a',
          name: 'once',
          source: 'tenant',
          document_version: 1,
          next_run_at: at,
          last_scheduled_at: null,
          updated_at: 0,
          timing: `{"at":${at},"zone":"UTC","enabled":true}`,
        },
        {
          tenant: 'acme',
          project: 'a',
          name: 'cron',
          source: 'tenant',
          document_version: 1,
          next_run_at: at,
          last_scheduled_at: null,
          updated_at: 0,
          timing: '{"cron":"0 * * * * *","zone":"UTC","enabled":true}',
        },
        {
          tenant: 'acme',
          project: 'a',
          name: 'mine',
          source: 'project',
          document_version: 1,
          next_run_at: at,
          last_scheduled_at: null,
          updated_at: 0,
          timing: `{"at":${at},"zone":"UTC","enabled":true}`,
        },
      ])
      .execute();
    // A tenant one-shot that fired everywhere (no state left), and a project one-shot that fired.
    await db
      .insertInto('documents')
      .values({
        tenant: 'acme',
        project: '_tenant',
        path: '_vance/scheduler/gone.yaml',
        body: 'x',
        created_by: 'alice',
        version: 1,
        created_at: 0,
        updated_at: 0,
        expires_at: null,
        trashed_from: null,
      })
      .execute();
    await db
      .insertInto('oneshot_fires')
      .values([
        { tenant: 'acme', project: 'a', name: 'gone', at: at - 1000, correlation_id: 'run_1', fired_at: at },
        { tenant: 'acme', project: 'a', name: 'own', at: at - 2000, correlation_id: 'run_2', fired_at: at },
      ])
      .execute();
    await migrate(store);
    const rows = await db.selectFrom('tenant_oneshots').selectAll().orderBy('name').execute();
    expect(rows.map((r) => [r.tenant, r.name, Number(r.at), Number(r.known_at)])).toEqual([
      ['acme', 'gone', at - 1000, at - 1000],
      ['acme', 'once', at, at],
    ]);
    const again = await migrator.migrateTo('0011-store-owner');
    expect(again.error).toBeUndefined();
    await migrate(store);
    expect(await db.selectFrom('tenant_oneshots').select('name').execute()).toHaveLength(2);
  });
});
