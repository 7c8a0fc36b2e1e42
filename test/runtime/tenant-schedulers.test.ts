import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import type { Caller } from '../../src/service/caller.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { ursa } from '../support/cli.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
let t: TestRuntime | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
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
// Several workers, refreshes and child processes per test: more than the default 5 s on a busy machine.
describe.each(DIALECTS)(
  'tenant schedulers in a project that becomes active, on %s (spec §3)',
  { timeout: 30_000 },
  (dialect) => {
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
      expect((await cli(['settings', 'set', 'project', 'pinned', 'lifecycleType', 'PERMANENT'])).code).toBe(
        0,
      );
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
  },
);

// Decisions §5, issue #20: a _tenant one-shot fires once in each project active when it falls due,
// and never later as a catch-up in a project that becomes active afterwards. Asserted from the
// marks the runs' own processes write, and from the run rows.
// Several workers, refreshes and child processes per test: more than the default 5 s on a busy machine.
describe.each(DIALECTS)('a _tenant one-shot on %s (decisions §5)', { timeout: 30_000 }, (dialect) => {
  const yearly = 'description: d\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: noop\n';
  const oneShot = (at: string) => `description: once\nat: "${at}"\nrecipe: mark\n`;

  async function setup() {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    dir = mkdtempSync(join(tmpdir(), 'ursa-tenant-once-'));
    const marks = join(dir, 'marks');
    await t.rt.repos.documents.put(
      { tenant: T, project: '_tenant', path: '_vance/recipes/mark.yaml' },
      shellRecipe(`echo "$URSA_PROJECT $URSA_SCHEDULER $URSA_SCHEDULED_FOR" >> ${marks}`),
      libraryActor('alice'),
      0,
    );
    const marked = () => {
      try {
        return readFileSync(marks, 'utf8').split('\n').filter(Boolean).sort();
      } catch {
        return [];
      }
    };
    return { t, marked };
  }

  async function tickAt(instant: string, worker = t?.worker() as ReturnType<TestRuntime['worker']>) {
    (t as TestRuntime).clock.set(Date.parse(instant));
    await worker.tick();
    await worker.executor.settled();
  }

  it('fires in the projects active at its instant, also as a catch-up after downtime, and never in one active only afterwards', async () => {
    const { t, marked } = await setup();
    await setScheduler(t.rt, admin('a'), 'own', yearly);
    await setScheduler(t.rt, admin('b'), 'own', yearly);
    await setScheduler(t.rt, admin('_tenant'), 'once', oneShot('2026-06-01T08:30:00Z'));
    // No worker runs from 08:00 to 09:05; project c becomes active at 09:00, after the instant.
    t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
    await setScheduler(t.rt, admin('c'), 'own', yearly);
    const worker = t.worker();
    t.clock.set(Date.parse('2026-06-01T09:05:00Z'));
    await worker.bootstrap();
    await tickAt('2026-06-01T09:05:00Z', worker);
    // Project d becomes active later still; a refresh and a restart change nothing.
    await setScheduler(t.rt, admin('d'), 'own', yearly);
    await tickAt('2026-06-01T09:10:00Z', worker);
    const restarted = t.worker({ exclusive: true }, await t.peer());
    await restarted.bootstrap();
    await tickAt('2026-06-01T09:20:00Z', restarted);

    expect(marked()).toEqual(['a once 2026-06-01T08:30:00Z', 'b once 2026-06-01T08:30:00Z']);
    expect(await runs(t.rt)).toEqual(['a/once 2026-06-01T08:30:00Z', 'b/once 2026-06-01T08:30:00Z']);
    expect((await states(t.rt)).filter((s) => s.includes('/once '))).toEqual([]);
  });

  it('fires in a project that becomes active before its instant, not in one that becomes active after it, even when no project was active when it was written', async () => {
    const { t, marked } = await setup();
    await setScheduler(t.rt, admin('_tenant'), 'once', oneShot('2026-06-01T08:30:00Z'));
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:10:00Z'));
    await setScheduler(t.rt, admin('early'), 'own', yearly);
    await tickAt('2026-06-01T08:30:00Z', worker);
    t.clock.set(Date.parse('2026-06-01T08:40:00Z'));
    await setScheduler(t.rt, admin('late'), 'own', yearly);
    await tickAt('2026-06-01T08:41:00Z', worker);
    expect(marked()).toEqual(['early once 2026-06-01T08:30:00Z']);
  });

  it('written with an instant already past, fires at once in every project active then and never in one active afterwards', async () => {
    const { t, marked } = await setup();
    const worker = t.worker();
    await worker.bootstrap();
    await setScheduler(t.rt, admin('a'), 'own', yearly);
    await setScheduler(t.rt, admin('b'), 'own', yearly);
    t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
    await setScheduler(t.rt, admin('_tenant'), 'once', oneShot('2026-06-01T08:30:00Z'));
    await tickAt('2026-06-01T09:00:00Z', worker);
    expect(marked()).toEqual(['a once 2026-06-01T08:30:00Z', 'b once 2026-06-01T08:30:00Z']);
    t.clock.set(Date.parse('2026-06-01T09:10:00Z'));
    await setScheduler(t.rt, admin('c'), 'own', yearly);
    await tickAt('2026-06-01T09:11:00Z', worker);
    // A tenant-wide refresh later (an edit of another tenant scheduler) does not bring it to c either.
    await setScheduler(t.rt, admin('_tenant'), 'audit', yearly);
    await tickAt('2026-06-01T09:12:00Z', worker);
    expect(marked()).toEqual(['a once 2026-06-01T08:30:00Z', 'b once 2026-06-01T08:30:00Z']);
  });
});
