import { afterEach, describe, expect, it } from 'vitest';
import { openStore, repositories, type Store } from '../../src/store/index.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';

let database: TestDatabase | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  await database?.drop();
  store = database = undefined;
});

// issue #11 (four saturated workers): a worker's lease renewal queued behind its own statements
// for the shared pool, waited over 4 s of a 5 s lease, and the others retired it as lost while it
// ran (decisions §5).
describe('lease renewal on PostgreSQL (decisions §5, issue #11)', () => {
  it('renews a worker’s lease while every connection of the shared pool is held', async () => {
    database = await freshDatabase('postgres');
    store = await openStore(database.location);
    const repos = repositories(store);
    await repos.workers.register({ id: 'w1', host: 'h', pid: 1, startedAt: 1_000 });

    // Ten transactions (the pool's size) that hold their connection until released.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const entered: Promise<void>[] = [];
    const holders = Array.from({ length: 10 }, () => {
      let enter: () => void = () => {};
      entered.push(new Promise<void>((resolve) => (enter = resolve)));
      return store?.db.transaction().execute(async (trx) => {
        await trx.selectFrom('workers').select('id').execute();
        enter();
        await released;
      });
    });
    await Promise.all(entered);

    // With the pool exhausted, this resolves only if the renewal does not need it.
    expect(await repos.workers.heartbeat('w1', 9_000)).toBe(true);
    release();
    await Promise.all(holders);
    // Renewed at 9,000: live under a 5 s lease at 13,000, which the registration alone was not.
    expect(await repos.workers.live(13_000, 5_000)).toEqual(['w1']);
  });
});
