import { afterEach, describe, expect, it } from 'vitest';
import { ownedSlots, slotOf } from '../../src/decisions/partition.js';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine, type HeldProcess } from '../support/engine.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { claimedRunRow } from '../support/runs.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #24: two workers collided on one scheduler's consecutive occurrences — one claimed the
// next while the other still held (and had not yet recorded the end of) the previous run, and
// recorded skipped_overlap. The worker holding a scheduler's active run claims its next
// occurrence; the owner of its slot claims once that run ended, and any worker once its worker
// was lost. Exactly once holds.

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
const FIRST = Date.parse('2026-06-01T08:00:10Z');

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function twoWorkers(dialect: (typeof DIALECTS)[number]) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const engine = controlledEngine();
  t.rt.engines.register(engine);
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'held', 'overlap: skip\n'),
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const a = t.worker({ leaseTtlMs: TTL });
  const rtB = await t.peer();
  rtB.engines.register(engine);
  const b = t.worker({ leaseTtlMs: TTL }, rtB);
  await a.bootstrap();
  await b.bootstrap();
  return { t, engine, a, b, rtB };
}

const runsOf = async (rt: Runtime) =>
  (await rt.repos.runs.listForScheduler(T, P, 'job', 10)).map((r) => [r.scheduledFor, r.workerId, r.outcome]);

describe.each(DIALECTS)('which worker claims a scheduler’s next occurrence on %s (issue #24)', (dialect) => {
  it('leaves it to the worker holding the active run, which judges the overlap; then the owner of its slot claims it', async () => {
    const { t, engine, a, b, rtB } = await twoWorkers(dialect);
    t.clock.set(FIRST);
    expect((await a.tick()).claimed).toBe(1);
    await until(async () => engine.processes.length === 1, 'the run started');
    const held = engine.processes[0] as HeldProcess;
    // The next occurrence is due while A's run is active: B passes over it, A claims it.
    t.clock.set(FIRST + 10_000);
    await a.heartbeat();
    await b.heartbeat();
    expect(await b.tick()).toMatchObject({ due: 0, claimed: 0 });
    expect(await a.tick()).toMatchObject({ due: 1, claimed: 1 });
    await until(async () => (await runsOf(rtB))[0]?.[2] === 'skipped_overlap', 'the overlap judged');
    expect(await runsOf(rtB)).toEqual([
      [FIRST + 10_000, a.id, 'skipped_overlap'],
      [FIRST, a.id, 'pending'],
    ]);
    // Once A's run ended and is recorded, the worker owning the scheduler's slot claims the next.
    held.finish();
    await until(async () => (await runsOf(rtB))[1]?.[2] === 'completed', 'the run ended');
    t.clock.set(FIRST + 20_000);
    await a.heartbeat();
    await b.heartbeat();
    // On SQLite (one serving process in production) any worker claims every slot.
    const slot = slotOf({ tenant: T, project: P, name: 'job' });
    const owning = dialect === 'sqlite' || ownedSlots(b.id, [a.id, b.id])?.includes(slot);
    const [owner, other] = owning ? [b, a] : [a, b];
    if (dialect === 'postgres') expect(await other.tick()).toMatchObject({ due: 0, claimed: 0 });
    expect(await owner.tick()).toMatchObject({ due: 1, claimed: 1 });
    await until(async () => engine.processes.length === 2, 'the next run started');
    expect((await runsOf(rtB))[0]).toEqual([FIRST + 20_000, owner.id, 'pending']);
  });

  it('claims no next occurrence of a scheduler while its own run of it waits to start here; once started, it judges the overlap', async () => {
    const { t, a, rtB } = await twoWorkers(dialect);
    // A's run of the 08:00:10 occurrence, claimed and not started yet (its batch still pending).
    await t.store.db
      .insertInto('runs')
      .values(claimedRunRow({ tenant: T, project: P, name: 'job' }, 'run_waiting', FIRST) as never)
      .execute();
    await t.store.db
      .updateTable('runs')
      .set({ worker_id: a.id })
      .where('correlation_id', '=', 'run_waiting')
      .execute();
    await t.store.db
      .updateTable('schedule_state')
      .set({ next_run_at: FIRST + 10_000, last_scheduled_at: FIRST })
      .where('name', '=', 'job')
      .execute();
    t.clock.set(FIRST + 10_000);
    await a.heartbeat();
    // Claiming the next now would have it collide with a run this worker has yet to start.
    expect(await a.tick()).toMatchObject({ due: 0, claimed: 0 });
    await t.store.db
      .updateTable('runs')
      .set({ state: 'started', started_at: FIRST, attempt: 1 })
      .where('correlation_id', '=', 'run_waiting')
      .execute();
    expect(await a.tick()).toMatchObject({ due: 1, claimed: 1 });
    await until(async () => (await runsOf(rtB))[0]?.[2] === 'skipped_overlap', 'the overlap judged');
  });

  it('claims the next occurrence of a scheduler whose active run a lost worker holds, without waiting for the reap', async () => {
    const { t, engine, a, b, rtB } = await twoWorkers(dialect);
    t.clock.set(FIRST);
    expect((await a.tick()).claimed).toBe(1);
    await until(async () => engine.processes.length === 1, 'the run started');
    // A is lost (its lease and the margin lapsed) when the next occurrence is due; B claims it.
    t.clock.set(FIRST + 10_000);
    expect(FIRST + 10_000 - Date.parse('2026-06-01T08:00:00Z')).toBeGreaterThan(TTL + TAKEOVER_MARGIN_MS);
    await b.heartbeat();
    expect(await b.tick()).toMatchObject({ due: 1, claimed: 1 });
    await until(async () => (await runsOf(rtB))[0]?.[2] === 'skipped_overlap', 'the overlap judged');
    expect((await runsOf(rtB))[0]).toEqual([FIRST + 10_000, b.id, 'skipped_overlap']);
    // The reap ends A's run as a lost worker's.
    await b.reap();
    expect((await runsOf(rtB))[1]).toEqual([FIRST, a.id, 'failed']);
  });
});

// Issue #24: the live workers share the schedulers out by slot, so that they do not compete for
// the same due rows; an occurrence whose owner does not claim it in time is claimed by another.
// PostgreSQL only: a SQLite store serves one process, which claims every slot.
describe.each(['postgres'] as const)('which worker claims by slot on %s (issue #24)', (dialect) => {
  const NAMES = Array.from({ length: 24 }, (_, i) => `s${i}`);

  async function manySchedulers() {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const engine = controlledEngine();
    t.rt.engines.register(engine);
    const files: Record<string, string> = {
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
    };
    for (const name of NAMES) files[`_vance/scheduler/${name}.yaml`] = cronScheduler('0 * * * * *', 'held');
    await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
    const a = t.worker({ leaseTtlMs: TTL });
    const rtB = await t.peer();
    rtB.engines.register(engine);
    const b = t.worker({ leaseTtlMs: TTL }, rtB);
    await a.bootstrap();
    await b.bootstrap();
    const owns = (id: string) => {
      const slots = ownedSlots(id, [a.id, b.id]) ?? [];
      return NAMES.filter((name) => slots.includes(slotOf({ tenant: T, project: P, name })));
    };
    return { t, a, b, owns };
  }

  const claimedBy = async (rt: Runtime, at: number) => {
    const byWorker = new Map<string, string[]>();
    for (const name of NAMES) {
      for (const run of await rt.repos.runs.listForScheduler(T, P, name, 10)) {
        if (run.scheduledFor !== at) continue;
        byWorker.set(run.workerId ?? '', [...(byWorker.get(run.workerId ?? '') ?? []), name]);
      }
    }
    return byWorker;
  };

  it('has each of two live workers claim the schedulers of its own slots, each occurrence once', async () => {
    const { t, a, b, owns } = await manySchedulers();
    const at = Date.parse('2026-06-01T08:01:00Z');
    t.clock.set(at);
    await a.heartbeat();
    await b.heartbeat();
    // Both halves are non-empty for these names (a check of the test itself).
    expect(owns(a.id).length).toBeGreaterThan(0);
    expect(owns(b.id).length).toBeGreaterThan(0);
    expect(await a.tick()).toMatchObject({ due: owns(a.id).length, claimed: owns(a.id).length });
    expect(await b.tick()).toMatchObject({ due: owns(b.id).length, claimed: owns(b.id).length });
    expect(await a.tick()).toMatchObject({ due: 0 });
    const claimed = await claimedBy(t.rt, at);
    expect(claimed.get(a.id)?.sort()).toEqual(owns(a.id).sort());
    expect(claimed.get(b.id)?.sort()).toEqual(owns(b.id).sort());
  });

  it('has a live worker claim the occurrences another live worker leaves overdue longer than a lease', async () => {
    const { t, a, b, owns } = await manySchedulers();
    const at = Date.parse('2026-06-01T08:01:00Z');
    t.clock.set(at);
    await a.heartbeat();
    await b.heartbeat();
    expect((await a.tick()).claimed).toBe(owns(a.id).length);
    // B stays live but claims nothing: its occurrences wait for it until they are overdue by
    // more than a lost worker keeps its lease; then A claims them.
    t.clock.set(at + TTL + TAKEOVER_MARGIN_MS - 1);
    await a.heartbeat();
    await b.heartbeat();
    expect(await a.tick()).toMatchObject({ due: 0 });
    t.clock.set(at + TTL + TAKEOVER_MARGIN_MS + 1);
    await a.heartbeat();
    await b.heartbeat();
    expect(await a.tick()).toMatchObject({ claimed: owns(b.id).length });
    expect((await claimedBy(t.rt, at)).get(a.id)?.sort()).toEqual([...NAMES].sort());
  });
});
