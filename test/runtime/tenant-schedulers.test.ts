import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import type { Caller } from '../../src/service/caller.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { ursa } from '../support/cli.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const admin = (project: string, user = 'alice'): Caller => ({ tenant: T, project, user, role: 'admin' });
const every10s = (extra = '') =>
  `description: d\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: noop\n${extra}`;

async function states(rt: Runtime) {
  const rows = await rt.repos.store.db
    .selectFrom('schedule_state')
    .select(['project', 'name', 'source', 'next_run_at'])
    .orderBy('project')
    .orderBy('name')
    .execute();
  return rows.map(
    (r) => `${r.project}/${r.name} ${r.source} ${r.next_run_at === null ? '-' : iso(Number(r.next_run_at))}`,
  );
}

async function runs(rt: Runtime) {
  const rows = await rt.repos.store.db
    .selectFrom('runs')
    .select(['project', 'name', 'scheduled_for'])
    .orderBy('project')
    .orderBy('name')
    .orderBy('scheduled_for')
    .execute();
  return rows.map((r) => `${r.project}/${r.name} ${iso(Number(r.scheduled_for))}`);
}

// Spec §3, issue #20: a project that becomes active gets the tenant's schedulers at once, not
// only at the next refresh or restart.
describe.each(DIALECTS)('tenant schedulers in a project that becomes active, on %s (spec §3)', (dialect) => {
  it('registers the tenant schedulers the moment a project gets its first own scheduler, and they fire there', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await setScheduler(t.rt, admin('_tenant'), 'audit', every10s());
    expect(await states(t.rt)).toEqual([]);
    await setScheduler(t.rt, admin('fresh'), 'own', every10s());
    expect(await states(t.rt)).toEqual([
      'fresh/audit tenant 2026-06-01T08:00:10Z',
      'fresh/own project 2026-06-01T08:00:10Z',
    ]);
    // A second own scheduler is a delta refresh again: nothing else moves.
    await setScheduler(t.rt, admin('fresh'), 'other', every10s());
    const worker = t.worker();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    expect(await worker.tick()).toMatchObject({ claimed: 3, fired: 3 });
    await worker.executor.settled();
    expect(await runs(t.rt)).toEqual([
      'fresh/audit 2026-06-01T08:00:10Z',
      'fresh/other 2026-06-01T08:00:10Z',
      'fresh/own 2026-06-01T08:00:10Z',
    ]);
  });

  it('registers the tenant schedulers the moment a project is pinned with ursa settings set, and unloads it when unpinned', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await setScheduler(t.rt, admin('_tenant'), 'audit', every10s());
    const cli = (args: string[]) =>
      ursa([...args, '--db', t?.location as string, '--tenant', T], { now: '2026-06-01T08:00:00Z' });
    expect((await cli(['settings', 'set', 'project', 'pinned', 'lifecycleType', 'PERMANENT'])).code).toBe(0);
    expect(await states(t.rt)).toEqual(['pinned/audit tenant 2026-06-01T08:00:10Z']);
    expect((await cli(['settings', 'unset', 'project', 'pinned', 'lifecycleType'])).code).toBe(0);
    expect(await states(t.rt)).toEqual([]);
  });

  it('apply of a _tenant folder registers its schedulers in every active project at once', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await setScheduler(t.rt, admin('a'), 'own', every10s());
    await applyDirectory(
      t.rt,
      projectFolder({ '_vance/scheduler/audit.yaml': every10s() }),
      T,
      '_tenant',
      libraryActor('alice'),
    );
    expect(await states(t.rt)).toEqual([
      'a/audit tenant 2026-06-01T08:00:10Z',
      'a/own project 2026-06-01T08:00:10Z',
    ]);
  });
});
