import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/service/caller.js';
import { listSchedulers } from '../../src/service/listing.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { openStore, repositories } from '../../src/store/index.js';
import { ursa } from '../support/cli.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// issue #23 item 5: a next run in the past while no worker holds a live lease is flagged
// `overdue`: nothing will start it until a worker runs.

const caller: Caller = { tenant: 'acme', project: 'ops', user: 'ada', role: 'admin' };
const HOURLY = 'description: hourly\ncron: "0 0 * * * *"\ntimezone: UTC\nrecipe: noop\n';

let t: TestRuntime | undefined;
let cwd: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true });
  cwd = undefined;
});

describe.each(DIALECTS)('overdue in the scheduler list on %s', (dialect) => {
  const overdue = async (rt: TestRuntime) =>
    (await listSchedulers(rt.rt, 'acme', 'ops')).schedulers.map((s) => [s.name, s.nextRunAt, s.overdue]);

  it('is false while the next run is ahead, true once it passed with no worker, false while a worker is live', async () => {
    t = await testRuntime('2026-06-01T08:30:00Z', { dialect });
    await setScheduler(t.rt, caller, 'hourly', HOURLY);
    expect(await overdue(t)).toEqual([['hourly', '2026-06-01T09:00:00Z', false]]);
    t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
    // Due this very instant is not overdue yet: a worker's tick may be on it.
    expect(await overdue(t)).toEqual([['hourly', '2026-06-01T09:00:00Z', false]]);
    t.clock.set(Date.parse('2026-06-01T10:15:00Z'));
    expect(await overdue(t)).toEqual([['hourly', '2026-06-01T09:00:00Z', true]]);
    await t.rt.repos.workers.register({ id: 'w1', host: 'h', pid: 1, startedAt: t.clock.now() });
    expect(await overdue(t)).toEqual([['hourly', '2026-06-01T09:00:00Z', false]]);
    // Its lease lapses (no heartbeat for longer than a live worker's): overdue again.
    t.clock.set(Date.parse('2026-06-01T10:16:00Z'));
    expect(await overdue(t)).toEqual([['hourly', '2026-06-01T09:00:00Z', true]]);
  });
});

describe('ursa list and describe of an overdue scheduler', () => {
  it('say no worker is running and how to start one; --json has overdue: true', async () => {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-overdue-'));
    const dir = projectFolder({ '_vance/scheduler/hourly.yaml': cronScheduler('0 0 * * * *', 'noop') });
    expect((await ursa(['apply', dir], { cwd, now: '2026-03-28T12:30:00Z' })).code).toBe(0);
    const ahead = await ursa(['list'], { cwd, now: '2026-03-28T12:30:00Z' });
    expect(ahead.stdout).not.toContain('overdue');
    const later = { cwd, now: '2026-03-29T08:00:00Z' };
    const list = await ursa(['list'], later);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(
      'hourly: next run 2026-03-28T13:00:00Z is overdue: no worker is running (start one with ursa serve or ursa worker)\n',
    );
    expect((await ursa(['describe', 'hourly'], later)).stdout).toContain(
      '  next run  2026-03-28T13:00:00Z, overdue: no worker is running (start one with ursa serve or ursa worker)\n',
    );
    expect(JSON.parse((await ursa(['list', '--json'], later)).stdout).schedulers[0]).toMatchObject({
      name: 'hourly',
      overdue: true,
    });
    const store = await openStore(join(cwd, 'data', 'ursa.db'));
    try {
      await repositories(store).workers.register({
        id: 'w1',
        host: 'h',
        pid: 1,
        startedAt: Date.parse(later.now),
      });
    } finally {
      await store.close();
    }
    expect((await ursa(['list'], later)).stdout).not.toContain('overdue');
  });
});
