import { afterEach, describe, expect, it, vi } from 'vitest';
import { bootstrapProjects } from '../../src/runtime/bootstrap.js';
import type { Caller } from '../../src/service/caller.js';
import { setScheduler } from '../../src/service/schedulers.js';
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

const admin = (project: string): Caller => ({ tenant: T, project, user: 'alice', role: 'admin' });
const cron = (expression: string, recipe = 'noop') =>
  `description: d\ncron: "${expression}"\ntimezone: UTC\nrecipe: ${recipe}\n`;
const key = (project: string, name: string) => ({
  tenant: T,
  project,
  path: `_vance/scheduler/${name}.yaml`,
});

function runtime(): TestRuntime {
  if (t === undefined) throw new Error('no runtime');
  return t;
}

// Scheduler document bodies read from now on: listed, fetched one by one or many at once.
function spyBodyReads(): () => string[] {
  const { documents } = runtime().rt.repos;
  const one = vi.spyOn(documents, 'get');
  const many = vi.spyOn(documents, 'getMany');
  const list = vi.spyOn(documents, 'list');
  return () => {
    const keys = [...one.mock.calls.map(([k]) => [k]), ...many.mock.calls.map(([ks]) => ks)].flat();
    const listed = list.mock.calls.map(([, project, prefix]) => `${project}/${prefix}*`);
    return [...keys.map((k) => `${k.project}/${k.path}`), ...listed].filter((p) =>
      p.includes('_vance/scheduler/'),
    );
  };
}

async function states() {
  const rows = await runtime()
    .store.db.selectFrom('schedule_state')
    .select(['project', 'name', 'document_version', 'next_run_at'])
    .orderBy('project')
    .orderBy('name')
    .execute();
  return rows.map((r) => [
    r.project,
    r.name,
    Number(r.document_version),
    r.next_run_at === null ? null : iso(Number(r.next_run_at)),
  ]);
}

// Spec §8 bootstrap at scale (issue #11): a start reads only the documents that can have changed.
describe.each(DIALECTS)('a worker’s bootstrap on %s (spec §8, issue #11)', (dialect) => {
  it('reads no unchanged cron document, and re-plans, removes or reports the ones changed behind its back', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const { rt } = t;
    for (const name of ['same', 'edited', 'gone', 'broken'])
      await setScheduler(rt, admin('p'), name, cron('0 */5 * * * *'));
    // While no worker runs: written, trashed and broken straight in the store, without a refresh.
    t.clock.set(Date.parse('2026-06-01T08:07:00Z'));
    await rt.repos.documents.put(
      key('p', 'edited'),
      cron('0 0 * * * *'),
      libraryActor('alice'),
      t.clock.now(),
    );
    await rt.repos.documents.trash(key('p', 'gone'), t.clock.now());
    await rt.repos.documents.put(
      key('p', 'broken'),
      cron('0 */5 * * * *', 'nosuch'),
      libraryActor('alice'),
      t.clock.now(),
    );
    await rt.repos.documents.put(
      key('p', 'added'),
      cron('0 */10 * * * *'),
      libraryActor('alice'),
      t.clock.now(),
    );

    const reads = spyBodyReads();
    expect(await bootstrapProjects(rt)).toEqual({
      projects: 1,
      unloaded: 0,
      schedulers: 4,
      checked: 4,
      failures: 1,
    });
    expect(reads().sort()).toEqual([
      'p/_vance/scheduler/added.yaml',
      'p/_vance/scheduler/broken.yaml',
      'p/_vance/scheduler/edited.yaml',
    ]);
    expect(await states()).toEqual([
      ['p', 'added', 1, '2026-06-01T08:10:00Z'],
      ['p', 'edited', 2, '2026-06-01T09:00:00Z'],
      // Unchanged: its waiting occurrence (behind by two minutes) is kept, to be coalesced.
      ['p', 'same', 1, '2026-06-01T08:05:00Z'],
    ]);
    const inbox = await rt.repos.inbox.list(T, 'alice', { limit: 10 });
    expect(inbox.map((i) => [i.kind, i.title])).toEqual([
      ['document-invalid', 'p/_vance/scheduler/broken.yaml (version 2) is invalid'],
    ]);
  });

  it('checks an unchanged document’s recipe when it falls due: a recipe gone while no worker ran is reported then, and the others fire', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const { rt } = t;
    await rt.repos.documents.put(
      { tenant: T, project: 'p', path: '_vance/recipes/ok.yaml' },
      shellRecipe('true'),
      libraryActor('alice'),
      0,
    );
    await setScheduler(rt, admin('p'), 'uses-ok', cron('*/10 * * * * *', 'ok'));
    await setScheduler(rt, admin('p'), 'plain', cron('*/10 * * * * *'));
    await rt.repos.documents.trash({ tenant: T, project: 'p', path: '_vance/recipes/ok.yaml' }, 0);

    const worker = t.worker();
    await worker.bootstrap();
    expect((await states()).map(([, name]) => name)).toEqual(['plain', 'uses-ok']);
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    expect(await worker.tick()).toMatchObject({ due: 2, claimed: 1, fired: 1 });
    await worker.executor.settled();
    expect((await states()).map(([, name]) => name)).toEqual(['plain']);
    const inbox = await rt.repos.inbox.list(T, 'alice', { limit: 10 });
    expect(inbox.map((i) => [i.kind, i.title, i.body])).toEqual([
      [
        'document-invalid',
        'p/_vance/scheduler/uses-ok.yaml (version 1) is invalid',
        'recipe: "ok" is not a recipe of project p, of _tenant, or built in',
      ],
    ]);
  });

  it('seeds the tick’s cache with the schedulers due soonest, up to its bound', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const { rt } = t;
    await setScheduler(rt, admin('p'), 'hourly', cron('0 0 * * * *'));
    await setScheduler(rt, admin('p'), 'soon', cron('*/10 * * * * *'));
    await setScheduler(rt, admin('p'), 'daily', cron('0 0 0 * * *'));
    const worker = t.worker();
    await bootstrapProjects(rt);
    const reads = spyBodyReads();
    expect(await worker.ticker.seed(1)).toBe(1);
    expect(reads()).toEqual(['p/_vance/scheduler/soon.yaml']);
  });
});
