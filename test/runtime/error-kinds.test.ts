import { afterEach, describe, expect, it, vi } from 'vitest';
import { UrsaError } from '../../src/errors/index.js';
import { loadProjectSchedulers } from '../../src/runtime/catalog.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// A store fault while a scheduler is checked says nothing about the document: it is never
// reported as an invalid scheduler (which would send an inbox item, or end its runs), only the
// refusals of input and state are (issue #19: store errors became Ursa errors; decisions §5).
const DOC = 'description: d\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\nrunAs: ada\n';

describe.each(DIALECTS)('checking the schedulers of a project on %s', (dialect) => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await t?.close();
    t = undefined;
  });

  it('lets a store outage through instead of reporting the scheduler invalid', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const caller = { tenant: 'acme', project: 'ops', user: 'ada', role: 'admin' } as const;
    await t.rt.repos.users.ensure('acme', 'ada', 0);
    await setScheduler(t.rt, caller, 'nightly', DOC);
    const outage = new UrsaError('STORE_UNAVAILABLE', 'the store cannot be reached; try again later');
    vi.spyOn(t.rt.repos.users, 'get').mockRejectedValue(outage);
    await expect(loadProjectSchedulers(t.rt.repos, 'acme', 'ops')).rejects.toBe(outage);
  });

  it('still reports a refusal of the document (an unknown runAs) as a failure of that scheduler', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const caller = { tenant: 'acme', project: 'ops', user: 'ada', role: 'admin' } as const;
    await t.rt.repos.users.ensure('acme', 'ada', 0);
    await setScheduler(t.rt, caller, 'nightly', DOC);
    vi.spyOn(t.rt.repos.users, 'get').mockResolvedValue(undefined);
    const { schedulers, failures } = await loadProjectSchedulers(t.rt.repos, 'acme', 'ops');
    expect(schedulers.size).toBe(0);
    expect(failures.map((f) => [f.name, f.issues])).toEqual([
      ['nightly', [{ path: 'runAs', message: expect.stringContaining('ada') }]],
    ]);
  });
});
