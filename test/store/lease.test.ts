import { afterEach, describe, expect, it } from 'vitest';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

// issue #11 (four saturated workers): a worker's lease renewal queued behind its own statements
// for the shared pool, waited over 4 s of a 5 s lease, and the others retired it as lost while it
// ran (decisions §5).
describe('lease renewal on PostgreSQL (decisions §5, issue #11)', () => {
  it('renews a worker’s lease while every connection of the shared pool is held', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect: 'postgres' });
    const { repos } = t.rt;
    const db = t.store.db;
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
      return db.transaction().execute(async (trx) => {
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
