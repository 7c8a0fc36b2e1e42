import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadProjectSchedulers } from '../../src/catalog/catalog.js';
import { SchedulerCache } from '../../src/catalog/scheduler-cache.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { claimedRunRow } from '../support/runs.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

let t: TestRuntime;
afterEach(() => t.close());

const T = 'acme';
const P = 'ops';
const at = (iso: string) => Date.parse(iso);

function claimedRun(name: string, correlationId: string, scheduledFor: number) {
  return claimedRunRow({ tenant: T, project: P, name }, correlationId, scheduledFor);
}

async function applyProject(files: Record<string, string>) {
  const entries = await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
  expect(entries.every((e) => e.status === 'created' || e.status === 'updated')).toBe(true);
}

// The scheduler documents read from now on, one by one or many at once (cache fills read many).
function spySchedulerReads(): () => string[] {
  const one = vi.spyOn(t.rt.repos.documents, 'get');
  const many = vi.spyOn(t.rt.repos.documents, 'getMany');
  return () =>
    [...one.mock.calls.map(([key]) => [key]), ...many.mock.calls.map(([keys]) => keys)]
      .flat()
      .map((key) => key.path)
      .filter((path) => path.startsWith('_vance/scheduler/'));
}

async function outputOf(correlationId: string): Promise<string | null | undefined> {
  const run = await t.rt.repos.runs.get(correlationId);
  return run?.processId ? (await t.rt.repos.processes.get(run.processId))?.outputTail : undefined;
}

// Issue #4: a due second is claimed in one transaction and started in one more.
describe.each(DIALECTS)('claiming and starting a due second in batches on %s (issue #4)', (dialect) => {
  it('claims many occurrences at once: a stale swap loses alone, an occurrence with a run only moves on (decisions §4)', async () => {
    const due = at('2026-06-01T08:00:00Z');
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const { schedules, runs } = t.rt.repos;
    for (const name of ['a', 'b', 'c'])
      await schedules.upsert(
        {
          tenant: T,
          project: P,
          name,
          source: 'project',
          documentVersion: 1,
          nextRunAt: due,
          lastScheduledAt: null,
          timing: null,
        },
        due,
      );
    // c's occurrence already has a run (a manual fire on the same key, say).
    await t.store.db
      .insertInto('runs')
      .values(claimedRun('c', 'run_c_earlier', due))
      .execute();
    const swap = (expectedNextRunAt: number) => ({
      expectedNextRunAt,
      expectedLastScheduledAt: null,
      nextRunAt: due + 10_000,
      now: due,
    });
    const won = await schedules.claimMany(
      [
        { key: { tenant: T, project: P, name: 'a' }, swap: swap(due), run: claimedRun('a', 'run_a', due) },
        {
          key: { tenant: T, project: P, name: 'b' },
          swap: swap(due - 1000),
          run: claimedRun('b', 'run_b', due),
        },
        { key: { tenant: T, project: P, name: 'c' }, swap: swap(due), run: claimedRun('c', 'run_c', due) },
      ],
      due,
    );
    expect([...won]).toEqual(['run_a']);
    expect((await schedules.get({ tenant: T, project: P, name: 'a' }))?.nextRunAt).toBe(due + 10_000);
    expect((await schedules.get({ tenant: T, project: P, name: 'b' }))?.nextRunAt).toBe(due);
    expect((await schedules.get({ tenant: T, project: P, name: 'c' }))?.nextRunAt).toBe(due + 10_000);
    expect(await runs.get('run_b')).toBeUndefined();
    expect(await runs.get('run_c')).toBeUndefined();
    expect((await runs.get('run_c_earlier'))?.state).toBe('claimed');
  });

  it('starts every run of a due second once, each with its process, START and END lines and run log (spec §7, §9a)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const files: Record<string, string> = {};
    for (let i = 0; i < 25; i++)
      files[`_vance/scheduler/job-${i}.yaml`] = cronScheduler('*/10 * * * * *', 'noop');
    await applyProject(files);
    const worker = t.worker();
    t.clock.set(at('2026-06-01T08:00:10Z'));
    // Two ticks in one second: the second finds nothing left to claim.
    expect((await worker.tick()).fired).toBe(25);
    expect((await worker.tick()).claimed).toBe(0);
    await worker.executor.settled();
    const rows = await t.store.db.selectFrom('runs').selectAll().execute();
    expect(rows).toHaveLength(25);
    expect(new Set(rows.map((r) => r.name)).size).toBe(25);
    expect(
      rows.every((r) => r.outcome === 'completed' && Number(r.started_at) === at('2026-06-01T08:00:10Z')),
    ).toBe(true);
    const processes = await t.store.db.selectFrom('processes').select(['id', 'status']).execute();
    expect(processes.map((p) => p.status)).toEqual(Array(25).fill('done'));
    expect(new Set(rows.map((r) => r.process_id))).toEqual(new Set(processes.map((p) => p.id)));
    const lines = await t.store.db.selectFrom('feed').select(['kind', 'trace_id']).execute();
    for (const kind of ['START', 'END'])
      expect(new Set(lines.filter((l) => l.kind === kind).map((l) => l.trace_id))).toEqual(
        new Set(rows.map((r) => r.correlation_id)),
      );
    expect(lines).toHaveLength(50);
    for (const row of rows) {
      const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: row.log_path });
      expect(log?.body).toContain('outcome: completed');
    }
  });

  it('claims an occurrence ahead of its instant and starts it at the instant, not before (fire-ahead window)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await applyProject({ '_vance/scheduler/early.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    const worker = t.worker();
    const due = at('2026-06-01T08:00:10Z');
    t.clock.set(due - 300);
    expect(await worker.tick(500)).toMatchObject({ claimed: 1, fired: 1 });
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'early', 10);
    expect(run).toMatchObject({ scheduledFor: due, claimedAt: due - 300, state: 'claimed' });
    // The state already waits for the occurrence after the one claimed.
    expect((await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'early' }))?.nextRunAt).toBe(
      due + 10_000,
    );
    expect(await t.rt.repos.runs.get(run?.correlationId ?? '')).toMatchObject({ state: 'claimed' });
    t.clock.set(due + 2);
    await until(
      async () => (await t.rt.repos.runs.get(run?.correlationId ?? ''))?.state === 'ended',
      'the run claimed ahead starts and ends',
    );
    expect(await t.rt.repos.runs.get(run?.correlationId ?? '')).toMatchObject({
      outcome: 'completed',
      startedAt: due + 2,
    });
  });

  it('a recipe edited between two occurrences applies from the next one (checked schedulers are re-read)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await applyProject({
      '_vance/recipes/say.yaml': shellRecipe('echo one'),
      '_vance/scheduler/speaker.yaml': cronScheduler('*/10 * * * * *', 'say'),
    });
    const worker = t.worker();
    t.clock.set(at('2026-06-01T08:00:10Z'));
    await worker.tick();
    await worker.executor.settled();
    await applyProject({ '_vance/recipes/say.yaml': shellRecipe('echo two') });
    t.clock.set(at('2026-06-01T08:00:20Z'));
    await worker.tick();
    await worker.executor.settled();
    const runs = await t.rt.repos.runs.listForScheduler(T, P, 'speaker', 10);
    const outputs = new Map<number, string | null | undefined>();
    for (const run of runs) outputs.set(run.scheduledFor, (await outputOf(run.correlationId))?.trim());
    expect(outputs).toEqual(
      new Map([
        [at('2026-06-01T08:00:20Z'), 'two'],
        [at('2026-06-01T08:00:10Z'), 'one'],
      ]),
    );
  });
  it('starts a batch durably a lead before its occurrence and enters its engines at the instant (issue #4)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const engine = controlledEngine();
    t.rt.engines.register(engine);
    await applyProject({
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/early.yaml': cronScheduler('*/10 * * * * *', 'held'),
    });
    const worker = t.worker();
    await worker.bootstrap();
    const due = at('2026-06-01T08:00:10Z');
    t.clock.set(due - 300);
    await worker.tick(500);
    const [claimed] = await t.rt.repos.runs.listForScheduler(T, P, 'early', 10);
    const state = async () => (await t.rt.repos.runs.get(claimed?.correlationId ?? ''))?.state;
    // No start measured yet: the lead for one run is 3 ms.
    t.clock.set(due - 1);
    await until(async () => (await state()) === 'started', 'the batch starts a lead ahead');
    expect(engine.processes).toHaveLength(0);
    const entered = engine.started();
    t.clock.set(due);
    const held = await entered;
    expect(held.request.context.scheduledFor).toBe(due);
    held.finish();
    await worker.executor.settled();
    expect(await t.rt.repos.runs.get(claimed?.correlationId ?? '')).toMatchObject({
      state: 'ended',
      outcome: 'completed',
      startedAt: due,
    });
  });

  it('the first claims after a worker starts read no scheduler document: the bootstrap refresh seeds the checked schedulers (issue #4)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await applyProject({
      '_vance/scheduler/a.yaml': cronScheduler('*/10 * * * * *', 'noop'),
      '_vance/scheduler/b.yaml': cronScheduler('*/10 * * * * *', 'noop'),
    });
    const worker = t.worker();
    await worker.bootstrap();
    const reads = spySchedulerReads();
    t.clock.set(at('2026-06-01T08:00:10Z'));
    expect(await worker.tick()).toMatchObject({ claimed: 2, fired: 2 });
    await worker.executor.settled();
    expect(reads()).toEqual([]);
    expect((await t.rt.repos.runs.listForScheduler(T, P, 'a', 10)).map((r) => r.outcome)).toEqual([
      'completed',
    ]);
  });
  it('keeps at most its capacity of checked schedulers, dropping the least recently filled (issue #4)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await applyProject({
      '_vance/scheduler/a.yaml': cronScheduler('*/10 * * * * *', 'noop'),
      '_vance/scheduler/b.yaml': cronScheduler('*/10 * * * * *', 'noop'),
    });
    const state = async (name: string) => {
      const found = await t.rt.repos.schedules.get({ tenant: T, project: P, name });
      if (found === undefined) throw new Error(`no state for ${name}`);
      return found;
    };
    const [a, b] = [await state('a'), await state('b')];
    const cache = new SchedulerCache(t.rt.repos, 1);
    const read = spySchedulerReads();
    await cache.resolve([a]);
    await cache.resolve([a]);
    expect(read()).toEqual(['_vance/scheduler/a.yaml']);
    await cache.resolve([b]);
    const [again] = await cache.resolve([a]);
    expect(again?.definition.trigger.kind).toBe('cron');
    expect(read()).toEqual(['_vance/scheduler/a.yaml', '_vance/scheduler/b.yaml', '_vance/scheduler/a.yaml']);
  });
  it('a run whose previous run ended here but is not yet written waits for that write, and starts instead of being skipped for overlap (overlap: skip)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await applyProject({ '_vance/scheduler/tick.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = 0;
    const worker = t.worker({
      faults: {
        beforeEnd: async () => {
          if (held++ === 0) await gate;
        },
      },
    });
    await worker.bootstrap();
    const first = at('2026-06-01T08:00:10Z');
    t.clock.set(first);
    await worker.tick();
    await until(async () => held === 1, 'the first run’s engine returned, its end held');
    t.clock.set(first + 10_000);
    await worker.tick();
    const states = async () =>
      (await t.rt.repos.runs.listForScheduler(T, P, 'tick', 10)).map((r) => [r.scheduledFor, r.state]);
    // The second run's start waits: its lane is still `started` in the store.
    expect(await states()).toEqual([
      [first + 10_000, 'claimed'],
      [first, 'started'],
    ]);
    release();
    await worker.executor.settled();
    const runs = await t.rt.repos.runs.listForScheduler(T, P, 'tick', 10);
    expect(runs.map((r) => [r.scheduledFor, r.outcome])).toEqual([
      [first + 10_000, 'completed'],
      [first, 'completed'],
    ]);
  });
  it('claims and starts 1,000 occurrences due at one instant in one tick, within the parameter limits of the store (issue #11)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const files: Record<string, string> = {};
    for (let i = 0; i < 1000; i++)
      files[`_vance/scheduler/s${String(i).padStart(4, '0')}.yaml`] = cronScheduler('0 * * * * *', 'noop');
    await applyProject(files);
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(at('2026-06-01T08:01:00Z'));
    expect(await worker.tick()).toMatchObject({ due: 1000, claimed: 1000, fired: 1000 });
    await worker.executor.settled();
    const rows = await t.store.db.selectFrom('runs').select(['outcome']).execute();
    expect(rows.filter((r) => r.outcome === 'completed')).toHaveLength(1000);
  }, 60_000);
  it('writes a pending run log for a batch run still running, and only the final one for a run that already returned (issue #11, spec §9a)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const engine = controlledEngine();
    t.rt.engines.register(engine);
    await applyProject({
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/long.yaml': cronScheduler('0 * * * * *', 'held'),
      '_vance/scheduler/quick.yaml': cronScheduler('0 * * * * *', 'noop'),
    });
    const worker = t.worker();
    await worker.bootstrap();
    const createMissing = vi.spyOn(t.rt.repos.documents, 'createMissing');
    const entered = engine.started();
    t.clock.set(at('2026-06-01T08:01:00Z'));
    expect(await worker.tick()).toMatchObject({ claimed: 2, fired: 2 });
    const held = await entered;
    await until(async () => createMissing.mock.calls.length === 1, 'the pending run logs are written');
    // Only the held run's pending log: the noop run returned before it was rendered.
    expect(createMissing.mock.calls[0]?.[0].map((row) => row.path)).toEqual([
      expect.stringMatching(/^_vance\/logs\/scheduler\/long\//),
    ]);
    const bodies = async () =>
      (
        await t.store.db
          .selectFrom('documents')
          .select(['path', 'body'])
          .where('path', 'like', '_vance/logs/%')
          .execute()
      )
        .map((d) => `${d.path.split('/')[3]} ${/^outcome: (\w+)/m.exec(d.body)?.[1]}`)
        .sort();
    await until(async () => (await bodies()).length === 2, 'the quick run ended');
    expect(await bodies()).toEqual(['long pending', 'quick completed']);
    held.finish();
    await worker.executor.settled();
    expect(await bodies()).toEqual(['long completed', 'quick completed']);
  });
  it('a refresh reads each recipe and user of a project once, not once per scheduler naming it (issue #11)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await applyProject({
      '_vance/recipes/say.yaml': shellRecipe('echo hi'),
      '_vance/scheduler/a.yaml': cronScheduler('*/10 * * * * *', 'say'),
      '_vance/scheduler/b.yaml': cronScheduler('*/10 * * * * *', 'say'),
      '_vance/scheduler/c.yaml': cronScheduler('*/10 * * * * *', 'say'),
    });
    const reads = vi.spyOn(t.rt.repos.documents, 'get');
    const users = vi.spyOn(t.rt.repos.users, 'get');
    const { schedulers, failures } = await loadProjectSchedulers(t.rt.repos, T, P);
    expect([...schedulers.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(failures).toEqual([]);
    expect(reads.mock.calls.map(([key]) => `${key.project}/${key.path}`).sort()).toEqual([
      `_tenant/_vance/recipes/say.yaml`,
      `${P}/_vance/recipes/say.yaml`,
    ]);
    expect(users).toHaveBeenCalledTimes(1);
  });
});
