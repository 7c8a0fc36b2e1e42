import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #24: at the top of the hour the claims parse no document: a worker reads and checks the
// schedulers of the coming minute in its idle time before, page by page, within a budget.
const T = 'acme';
const P = 'ops';
const COUNT = 1_500;

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe.each(DIALECTS)('preparing the coming occurrences on %s (issue #24)', (dialect) => {
  it('checks the schedulers due within the horizon ahead, so that their claim reads no document', async () => {
    t = await testRuntime('2026-06-01T07:59:30Z', { dialect });
    const worker = t.worker();
    await worker.bootstrap();
    // Applied after the start-up, which seeds the cache: these are not held yet.
    const files: Record<string, string> = { '_vance/recipes/noop.yaml': 'description: n\nengine: noop\n' };
    for (let i = 0; i < COUNT; i++)
      files[`_vance/scheduler/s${i}.yaml`] = cronScheduler('0 0 8 * * *', 'noop');
    files['_vance/scheduler/later.yaml'] = cronScheduler('0 0 9 * * *', 'noop');
    await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
    const reads = vi.spyOn(t.rt.repos.documents, 'getMany');

    // A budget of nothing still does one page; the next pass goes on where it stopped.
    expect(await worker.ticker.prepare(60_000, 0)).toBe(1_000);
    expect(await worker.ticker.prepare(60_000, 60_000)).toBe(COUNT - 1_000);
    // The 09:00 scheduler is beyond the horizon; a pass over a prepared window checks nothing.
    expect(await worker.ticker.prepare(60_000, 60_000)).toBe(0);
    const prepared = reads.mock.calls.length;
    expect(prepared).toBeGreaterThan(0);

    t.clock.set(Date.parse('2026-06-01T08:00:00Z'));
    let claimed = 0;
    for (let tick = await worker.tick(); tick.due > 0; tick = await worker.tick()) claimed += tick.claimed;
    expect(claimed).toBe(COUNT);
    expect(reads.mock.calls.length).toBe(prepared);
    await worker.stop();
  });

  it("is done by the worker's loop in its idle time before the instant, though each of its sleeps is short", async () => {
    t = await testRuntime('2026-06-01T07:59:30Z', { dialect });
    // Sleeps far shorter than the idle time a prepare needs: the loop prepares by the time left
    // before the occurrence, not by its capped sleep (it prepared nothing while it did).
    const worker = t.worker({ maxSleepMs: 20 });
    let prepared = 0;
    const prepare = worker.ticker.prepare.bind(worker.ticker);
    vi.spyOn(worker.ticker, 'prepare').mockImplementation(async (...args) => {
      const checked = await prepare(...args);
      prepared += checked;
      return checked;
    });
    await worker.start();
    const files: Record<string, string> = { '_vance/recipes/noop.yaml': 'description: n\nengine: noop\n' };
    for (let i = 0; i < COUNT; i++)
      files[`_vance/scheduler/s${i}.yaml`] = cronScheduler('0 0 8 * * *', 'noop');
    await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
    await until(async () => prepared === COUNT, 'the loop prepares the 08:00 schedulers');
    await worker.stop();
    // Nothing was claimed: the clock never reached the instant.
    expect(await t.rt.repos.runs.listForScheduler(T, P, 's0', 10)).toEqual([]);
  });
});
