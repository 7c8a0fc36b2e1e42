import { afterEach, describe, expect, it } from 'vitest';
import { loadProjectSchedulers } from '../../src/catalog/catalog.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { repositories } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { selectFaults, storeFailure } from '../support/select-faults.js';

// A store fault while a scheduler is checked says nothing about the document: it is never
// reported as an invalid scheduler (which would send an inbox item, or remove its state); only
// the refusals of input and state are (issue #20: errors have a kind).
const DOC = 'description: d\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\nrunAs: ada\n';
const caller = { tenant: 'acme', project: 'ops', user: 'ada', role: 'admin' } as const;

describe.each(DIALECTS)('checking the schedulers of a project on %s (issue #20)', (dialect) => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('lets a store error through instead of reporting the scheduler invalid', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await t.rt.repos.users.ensure('acme', 'ada', 0);
    await setScheduler(t.rt, caller, 'nightly', DOC);
    const faults = selectFaults(t.store);
    faults.failNext('users', () => storeFailure(dialect));
    await expect(loadProjectSchedulers(repositories(faults.store), 'acme', 'ops')).rejects.toMatchObject({
      code: storeFailure(dialect).code,
    });
    expect(faults.failed).toBe(1);
  });

  it('still reports a refusal of the document (a runAs naming no user) as a failure of that scheduler', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await t.rt.repos.users.ensure('acme', 'ada', 0);
    await setScheduler(t.rt, caller, 'nightly', DOC);
    await t.store.db.deleteFrom('users').where('tenant', '=', 'acme').where('name', '=', 'ada').execute();
    const { schedulers, failures } = await loadProjectSchedulers(t.rt.repos, 'acme', 'ops');
    expect(schedulers.size).toBe(0);
    expect(failures.map((f) => [f.name, f.issues])).toEqual([
      ['nightly', [{ path: 'runAs', message: expect.stringContaining('ada') }]],
    ]);
  });
});
