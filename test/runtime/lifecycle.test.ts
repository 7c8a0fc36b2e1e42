import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { SimulatedCrash } from '../../src/runtime/faults.js';
import { refreshAll, refreshProject } from '../../src/runtime/registrar.js';
import type { Caller } from '../../src/service/caller.js';
import { deleteScheduler, setScheduler, TENANT_WRITE_WARNING } from '../../src/service/schedulers.js';
import { setSetting } from '../../src/service/settings.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const admin = (project: string, user = 'alice'): Caller => ({ tenant: T, project, user, role: 'admin' });
const every10s = (recipe = 'noop', extra = '') =>
  `description: d\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: ${recipe}\n${extra}`;

async function states(rt: Runtime) {
  const rows = await rt.repos.store.db
    .selectFrom('schedule_state')
    .select(['project', 'name', 'source', 'next_run_at'])
    .orderBy('project')
    .orderBy('name')
    .execute();
  return rows.map((r) => [
    r.project,
    r.name,
    r.source,
    r.next_run_at === null ? null : iso(Number(r.next_run_at)),
  ]);
}

// spec §3, §8, §10a, §10c (issue #6), on both stores.
describe.each(DIALECTS)('scheduler lifecycle on %s', (dialect) => {
  it('fires a tenant scheduler in every active project and in no other; a project document replaces it whole (spec §3)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const rt = t.rt;
    // Two active projects (own schedulers), one sleeping project with nothing of its own.
    await setScheduler(rt, admin('a'), 'own-a', every10s());
    await setScheduler(rt, admin('b'), 'own-b', every10s());
    const written = await setScheduler(rt, admin('_tenant'), 'audit', every10s());
    expect(written.warnings).toEqual([TENANT_WRITE_WARNING]);
    await setScheduler(
      rt,
      admin('b'),
      'audit',
      'description: b override\ncron: "0 0 * * * *"\ntimezone: UTC\nrecipe: noop\n',
    );
    expect(await states(rt)).toEqual([
      ['a', 'audit', 'tenant', '2026-06-01T08:00:10Z'],
      ['a', 'own-a', 'project', '2026-06-01T08:00:10Z'],
      ['b', 'audit', 'project', '2026-06-01T09:00:00Z'],
      ['b', 'own-b', 'project', '2026-06-01T08:00:10Z'],
    ]);
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await worker.tick();
    await worker.executor.settled();
    const runs = await rt.repos.store.db
      .selectFrom('runs')
      .select(['project', 'name'])
      .orderBy('project')
      .orderBy('name')
      .execute();
    expect(runs).toEqual([
      { project: 'a', name: 'audit' },
      { project: 'a', name: 'own-a' },
      { project: 'b', name: 'own-b' },
    ]);
  });

  it('makes the right projects active again after a restart: own documents or pinned, never suspended', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const rt = t.rt;
    await setScheduler(rt, admin('_tenant'), 'audit', every10s());
    await setScheduler(rt, admin('docs'), 'own', every10s());
    await setScheduler(rt, admin('paused'), 'own', every10s());
    await setSetting(
      rt,
      { tenant: T, scope: 'project', subject: 'pinned', key: 'lifecycleType', value: 'PERMANENT' },
      0,
    );
    await rt.repos.projects.setSuspended(T, 'paused', true, 0);
    // The restart: state is rebuilt from documents and settings alone.
    await rt.repos.store.db.deleteFrom('schedule_state').execute();
    await refreshAll(await t.peer());
    expect((await states(rt)).map(([p, n]) => `${p}/${n}`)).toEqual([
      'docs/audit',
      'docs/own',
      'pinned/audit',
    ]);
  });

  it('unloads a project when its last own scheduler is deleted, unless it is pinned', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const rt = t.rt;
    await setScheduler(rt, admin('_tenant'), 'audit', every10s());
    await setScheduler(rt, admin('p'), 'own', every10s());
    const { trashPath } = await deleteScheduler(rt, admin('p'), 'own');
    expect(trashPath).toMatch(/^_vance\/trash\/[0-9a-f-]+_own\.yaml$/);
    expect(await states(rt)).toEqual([]);
    await setSetting(
      rt,
      { tenant: T, scope: 'project', subject: 'p', key: 'lifecycleType', value: 'PERMANENT' },
      0,
    );
    await refreshProject(rt, T, 'p');
    expect((await states(rt)).map(([p, n]) => `${p}/${n}`)).toEqual(['p/audit']);
  });

  it('sends an invalid document to its author’s inbox once, while the others fire (spec §8)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const rt = t.rt;
    await setScheduler(rt, admin('p'), 'good', every10s());
    // Written behind the service's back (an older version of Ursa, a hand edit): refresh must cope.
    await rt.repos.users.ensure(T, 'bob', 0);
    await rt.repos.documents.put(
      { tenant: T, project: 'p', path: '_vance/scheduler/bad.yaml' },
      every10s('nosuch'),
      libraryActor('bob'),
      0,
    );
    const first = await refreshProject(rt, T, 'p');
    await refreshProject(rt, T, 'p');
    expect(first.registered).toEqual(['good']);
    const items = await rt.repos.inbox.list(T, 'bob', { limit: 10 });
    expect(items.map((i) => [i.kind, i.title, i.body])).toEqual([
      [
        'document-invalid',
        'p/_vance/scheduler/bad.yaml (version 1) is invalid',
        'recipe: "nosuch" is not a recipe of project p, of _tenant, or built in',
      ],
    ]);
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    expect(await worker.tick()).toMatchObject({ claimed: 1, fired: 1 });
    await worker.executor.settled();
  });

  it('keeps unchanged state through a refresh and recomputes changed timing from now (spec §8)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const rt = t.rt;
    await setScheduler(rt, admin('p'), 'job', every10s());
    // Behind by a minute: the waiting occurrence stays when only the description changes.
    t.clock.set(Date.parse('2026-06-01T08:01:05Z'));
    await setScheduler(
      rt,
      admin('p'),
      'job',
      every10s('noop').replace('description: d', 'description: renamed'),
    );
    expect(await states(rt)).toEqual([['p', 'job', 'project', '2026-06-01T08:00:10Z']]);
    await setScheduler(
      rt,
      admin('p'),
      'job',
      'description: d\ncron: "0 */5 * * * *"\ntimezone: UTC\nrecipe: noop\n',
    );
    expect(await states(rt)).toEqual([['p', 'job', 'project', '2026-06-01T08:05:00Z']]);
  });
});

// spec §10a one-shots, with fault points after the spawn and after the marker (issue #6).
describe.each(DIALECTS)('one-shots on %s (spec §10a)', (dialect) => {
  class Crash extends SimulatedCrash {}
  const oneShot = 'description: once\nat: "2026-06-01T08:30:00Z"\nrecipe: ok\n';

  for (const point of ['afterSpawn', 'afterMarker'] as const) {
    it(`never runs twice and ends in the trash after a crash ${point === 'afterSpawn' ? 'after the spawn' : 'after the marker'}`, async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      await t.rt.repos.documents.put(
        { tenant: T, project: 'p', path: '_vance/recipes/ok.yaml' },
        shellRecipe('true'),
        libraryActor('alice'),
        0,
      );
      await setScheduler(t.rt, admin('p'), 'once', oneShot);
      const crashing = t.worker({ faults: { [point]: () => Promise.reject(new Crash(point)) } });
      await crashing.bootstrap();
      t.clock.set(Date.parse('2026-06-01T08:30:00Z'));
      expect(await crashing.tick()).toMatchObject({ fired: 1 });
      await crashing.executor.settled();

      // A new process on the same store, as after the crash.
      const rt = await t.peer();
      const worker = t.worker({ exclusive: true }, rt);
      await worker.bootstrap();
      t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
      expect(await worker.tick()).toMatchObject({ claimed: 0 });
      await worker.executor.settled();
      expect(await rt.repos.store.db.selectFrom('runs').select('correlation_id').execute()).toHaveLength(1);
      expect(
        await rt.repos.documents.get({ tenant: T, project: 'p', path: '_vance/scheduler/once.yaml' }),
      ).toBeUndefined();
      const trash = await rt.repos.documents.list(T, 'p', '_vance/trash/');
      expect(trash.map((d) => d.path)).toEqual([expect.stringMatching(/_once\.yaml$/)]);
      expect(await rt.repos.projects.hasFired(T, 'p', 'once', Date.parse('2026-06-01T08:30:00Z'))).toBe(true);
      // A new document of the same name with a new at: fires normally.
      await setScheduler(rt, admin('p'), 'once', oneShot.replace('08:30:00Z', '09:30:00Z'));
      expect(await states(rt)).toEqual([['p', 'once', 'project', '2026-06-01T09:30:00Z']]);
    });
  }

  it('fires a past at: once at start, then trashes it (catch-up after downtime)', async () => {
    t = await testRuntime('2026-06-01T10:00:00Z', { dialect });
    await t.rt.repos.documents.put(
      { tenant: T, project: 'p', path: '_vance/recipes/ok.yaml' },
      shellRecipe('true'),
      libraryActor('alice'),
      0,
    );
    await setScheduler(t.rt, admin('p'), 'once', oneShot);
    const worker = t.worker();
    await worker.bootstrap();
    expect(await worker.tick()).toMatchObject({ claimed: 1, fired: 1 });
    await worker.executor.settled();
    expect(await worker.tick()).toMatchObject({ due: 0 });
    expect(
      await t.rt.repos.documents.get({ tenant: T, project: 'p', path: '_vance/scheduler/once.yaml' }),
    ).toBeUndefined();
  });
});

// spec §10c: the time-zone fill writes the caller's display zone into the document, keeping the rest.
describe('time-zone fill on write (spec §10c)', () => {
  it('writes the caller’s zone after the cron line, keeping comments, order and quoting', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await t.rt.repos.users.ensure(T, 'mia', 0, 'Europe/Berlin');
    const yaml = [
      '# Morning note for Mia',
      'description: "Remind me at nine"   # shown in lists',
      'cron: "0 0 9 * * MON-FRI"',
      'recipe: noop',
      'tags: [daily, reminder]',
      '',
    ].join('\n');
    const result = await setScheduler(
      t.rt,
      { tenant: T, project: 'p', user: 'mia', role: 'write' },
      'nine',
      yaml,
    );
    expect(result.filledTimezone).toBe('Europe/Berlin');
    const doc = await t.rt.repos.documents.get({
      tenant: T,
      project: 'p',
      path: '_vance/scheduler/nine.yaml',
    });
    expect(doc?.body).toBe(
      [
        '# Morning note for Mia',
        'description: "Remind me at nine" # shown in lists',
        'cron: "0 0 9 * * MON-FRI"',
        'timezone: Europe/Berlin',
        'recipe: noop',
        'tags: [ daily, reminder ]',
        '',
      ].join('\n'),
    );
    // Read in Berlin: 09:00 CEST is 07:00Z; it is past on Monday the 1st, so Tuesday.
    expect(await states(t.rt)).toEqual([['p', 'nine', 'project', '2026-06-02T07:00:00Z']]);
  });

  it('never overrides an explicit timezone', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await t.rt.repos.users.ensure(T, 'mia', 0, 'Europe/Berlin');
    const yaml = 'description: d\ncron: "0 0 9 * * *"\ntimezone: Asia/Tokyo\nrecipe: noop\n';
    const result = await setScheduler(
      t.rt,
      { tenant: T, project: 'p', user: 'mia', role: 'write' },
      'tokyo',
      yaml,
    );
    expect(result.filledTimezone).toBeUndefined();
    expect(
      (await t.rt.repos.documents.get({ tenant: T, project: 'p', path: '_vance/scheduler/tokyo.yaml' }))
        ?.body,
    ).toBe(yaml);
  });

  it('refuses a runAs naming another user from a non-admin, writing nothing (decisions §6)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await t.rt.repos.users.ensure(T, 'bob', 0);
    const caller: Caller = { tenant: T, project: 'p', user: 'mia', role: 'write' };
    await expect(setScheduler(t.rt, caller, 'x', `${every10s()}runAs: bob\n`)).rejects.toMatchObject({
      code: 'FORBIDDEN',
      field: 'runAs',
    });
    expect(await t.rt.repos.documents.list(T, 'p', '')).toEqual([]);
  });
});
