import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadProjectSchedulers } from '../../src/catalog/catalog.js';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import type { PendingRun } from '../../src/runs/run.js';
import type { Runtime } from '../../src/runtime/context.js';
import { feedLineOf } from '../../src/runtime/recorder.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { fireScheduler } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { feedRow } from '../../src/store/feed.js';
import type { Run } from '../../src/store/runs.js';
import { tempDir } from '../engines/helpers.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { reply, startHookServer } from '../support/hook-server.js';
import { httpRecipe } from '../support/http-run.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5): each start of a run (an attempt) carries a fencing token, larger for
// every later attempt of the scheduler; every engine receives it, and the run's own writes after
// its start are conditioned on it, so a worker whose lease was taken over records neither a start
// nor an end of a run it no longer owns. What the processes did is read from the marks the child
// processes write, not only from the store.

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
/** A worker counts as lost once its heartbeat is older than the lease and the takeover margin. */
const DEAD_AFTER = TTL + TAKEOVER_MARGIN_MS;
const START = '2026-06-01T08:00:00Z';
const FIRST = Date.parse('2026-06-01T08:00:10Z');

let t: TestRuntime | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  t = undefined;
});

/** Appends `<correlationId> <fencing token> <attempt> <pid>` to the file `out`. */
const MARK = 'echo "$URSA_CORRELATION_ID $URSA_FENCING_TOKEN $URSA_ATTEMPT $$" >> "$URSA_PARAM_OUT"';

/**
 * Marks `start <pid>`, then runs for at most 5 s (so a test that fails leaves nothing behind);
 * SIGTERM marks `term <pid>` and ends it.
 */
const LONG =
  'echo "start $$" >> "$URSA_PARAM_OUT"; trap \'echo "term $$" >> "$URSA_PARAM_OUT"; exit 143\' TERM; ' +
  'i=0; while [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; echo "end $$" >> "$URSA_PARAM_OUT"';

function marks(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
}

async function apply(rt: Runtime, files: Record<string, string>): Promise<void> {
  const entries = await applyDirectory(rt, projectFolder(files), T, P, libraryActor('alice'));
  expect(entries.filter((e) => e.status !== 'created')).toEqual([]);
}

async function runsOf(rt: Runtime, name: string): Promise<Run[]> {
  return (await rt.repos.runs.listForScheduler(T, P, name, 100)).reverse();
}

async function only(rt: Runtime, name: string): Promise<Run> {
  const [run, ...more] = await runsOf(rt, name);
  if (run === undefined || more.length > 0) throw new Error(`expected one run of ${name}`);
  return run;
}

async function effective(rt: Runtime, name: string) {
  const { schedulers } = await loadProjectSchedulers(rt.repos, T, P);
  return schedulers.get(name) as NonNullable<ReturnType<typeof schedulers.get>>;
}

/** The scheduler's feed lines, oldest first, as `KIND outcome`, with their details. */
async function feed(rt: Runtime, name: string) {
  return (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', name, 100))
    .reverse()
    .map((l) => ({ line: `${l.kind} ${l.outcome}`, id: l.id, payload: l.payload }));
}

/** A call of `method` on `target` held at its start (`hold: 'before'`) or end until the test opens it. */
function holdFirstCall<O extends object, K extends keyof O>(target: O, method: K, hold: 'before' | 'after') {
  let reachedNow: () => void = () => {};
  let openNow: () => void = () => {};
  const reached = new Promise<void>((resolve) => {
    reachedNow = resolve;
  });
  const opened = new Promise<void>((resolve) => {
    openNow = resolve;
  });
  const original = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  let calls = 0;
  vi.spyOn(target, method as never).mockImplementation((async (...args: unknown[]) => {
    if (calls++ > 0) return original(...args);
    if (hold === 'before') {
      reachedNow();
      await opened;
      return original(...args);
    }
    const result = await original(...args);
    reachedNow();
    await opened;
    return result;
  }) as never);
  return { reached, open: openNow };
}

describe.each(DIALECTS)('fencing tokens of run attempts on %s (issue #20, decisions §5)', (dialect) => {
  it("every engine receives its run's token and attempt: a shell run's environment, an http run's header and payload, a workflow step's environment", async () => {
    t = await testRuntime(START, { dialect });
    const out = join(tempDir(), 'marks');
    const server = await startHookServer(reply(200, 'ok'));
    await apply(t.rt, {
      '_vance/recipes/mark.yaml': shellRecipe(MARK, { out }),
      '_vance/recipes/hook.yaml': httpRecipe(`${server.origin}/hook`),
      '_vance/workflows/flow.yaml': 'description: one step\nsteps:\n  - name: mark\n    recipe: mark\n',
      '_vance/scheduler/shell.yaml': cronScheduler('*/10 * * * * *', 'mark'),
      '_vance/scheduler/hook.yaml': cronScheduler('*/10 * * * * *', 'hook'),
      '_vance/scheduler/flow.yaml': cronScheduler('*/10 * * * * *', 'mark').replace(
        'recipe: mark',
        'workflow: flow',
      ),
    });
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(FIRST);
    expect(await worker.tick()).toMatchObject({ fired: 3 });
    const rt = t.rt;
    await until(
      async () => (await only(rt, 'flow')).state === 'ended',
      'the workflow run ends with its scheduler run',
    );
    await worker.executor.settled();
    // A manual fire takes the one-at-a-time path: its engine gets its token too.
    await fireScheduler(t.rt, T, P, 'shell');
    await worker.reap();
    await worker.executor.settled();

    const [shell, fired] = await runsOf(t.rt, 'shell');
    const hook = await only(t.rt, 'hook');
    const flow = await only(t.rt, 'flow');
    const runs = [shell, fired, hook, flow] as Run[];
    for (const run of runs) {
      expect(run).toMatchObject({ state: 'ended', outcome: 'completed', attempt: 1 });
      expect(Number.isSafeInteger(run.fencingToken) && (run.fencingToken as number) > 0).toBe(true);
    }
    // Each scheduler counts its own tokens: its first attempt has 1, whatever the others started.
    expect(runs.map((r) => r.fencingToken)).toEqual([1, 2, 1, 1]);
    // The marks of the shell runs and of the workflow's step, written by the child processes.
    const seen = marks(out).map((line) => line.split(' ').slice(0, 3).join(' '));
    expect(seen.sort()).toEqual(
      [shell, fired, flow].map((r) => `${(r as Run).correlationId} ${(r as Run).fencingToken} 1`).sort(),
    );
    const [received] = server.received;
    expect(received?.headers['ursa-fencing-token']).toBe(String(hook.fencingToken));
    expect(JSON.parse(received?.body ?? '').trigger).toMatchObject({
      correlationId: hook.correlationId,
      fencingToken: hook.fencingToken,
      attempt: 1,
    });
    // The run log and the REST view name the attempt, so a refused token can be traced to its run.
    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: hook.logPath });
    expect(log?.body).toContain(`\nattempt: 1\nfencingToken: ${hook.fencingToken}\n`);
  });

  it("a later attempt of a scheduler carries a larger token than every earlier one: the batch, a manual fire, a waiting run's turn, and a second attempt of one run", async () => {
    t = await testRuntime(START, { dialect });
    const engine = controlledEngine();
    t.rt.engines.register(engine);
    const files: Record<string, string> = {
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/lane.yaml': cronScheduler('*/10 * * * * *', 'held', 'overlap: queue\n'),
    };
    // Neighbours started in the same batches: no two runs of the store share a token.
    for (let i = 0; i < 5; i++)
      files[`_vance/scheduler/n${i}.yaml`] = cronScheduler('*/10 * * * * *', 'noop');
    await apply(t.rt, files);
    const worker = t.worker();
    await worker.bootstrap();
    const order: string[] = [];
    const next = async (step: () => Promise<unknown>) => {
      const started = engine.started();
      await step();
      const held = await started;
      order.push(held.request.context.correlationId);
      return held;
    };

    t.clock.set(FIRST);
    const first = await next(() => worker.tick()); // the batch path
    t.clock.set(FIRST + 10_000);
    await worker.tick(); // the lane is busy: the run waits (queue)
    const second = await next(async () => first.finish()); // a waiting run's turn
    const third = await next(async () => {
      second.finish();
      await worker.executor.settled();
      await fireScheduler(t?.rt as Runtime, T, P, 'lane');
      await worker.reap(); // a manual fire, one at a time
    });
    third.finish();
    await worker.executor.settled();

    // A second attempt of the third run (a retry, a takeover): the run is claimed again and started.
    const retried = await t.rt.repos.runs.get(order[2] as string);
    expect(
      await t.rt.repos.runs.transition(order[2] as string, 'ended', {
        state: 'claimed',
        outcome: 'pending',
        reason: null,
        ended_at: null,
      }),
    ).toBe(true);
    const again = await next(async () =>
      worker.executor.start(
        (await t?.rt.repos.runs.get(order[2] as string)) as PendingRun,
        await effective(t?.rt as Runtime, 'lane'),
      ),
    );
    expect(again.request.context.correlationId).toBe(order[2]);
    again.finish();
    await worker.executor.settled();

    const lane = await Promise.all(order.map((id) => t?.rt.repos.runs.get(id)));
    // Each engine got the token recorded for its attempt, and each later attempt a larger one.
    const tokens = [first, second, third, again].map((h) => h.request.context.fencingToken as number);
    expect(tokens).toEqual([
      lane[0]?.fencingToken,
      lane[1]?.fencingToken,
      retried?.fencingToken,
      lane[2]?.fencingToken,
    ]);
    expect([first, second, third, again].map((h) => h.request.context.attempt)).toEqual([1, 1, 1, 2]);
    expect(lane[2]).toMatchObject({ attempt: 2, state: 'ended', outcome: 'completed' });
    for (let i = 1; i < tokens.length; i++)
      expect(tokens[i] as number, `attempt ${i + 1}`).toBeGreaterThan(tokens[i - 1] as number);
    // No two attempts of one scheduler share a token.
    const all = await t.store.db.selectFrom('runs').select(['name', 'fencing_token']).execute();
    expect(all.filter((r) => r.fencing_token === null)).toEqual([]);
    for (const name of new Set(all.map((r) => r.name))) {
      const tokens = all.filter((r) => r.name === name).map((r) => Number(r.fencing_token));
      expect(new Set(tokens).size, name).toBe(tokens.length);
    }
  });

  // Two attempts of one run, constructed as a retry or an adoption will make them: worker A runs
  // attempt 1; the run is taken over and attempt 2 started, by another worker or by A's own id
  // after it was retired and registered again (a heartbeat revives it). A still writes attempt
  // 1's start and end late: each write does nothing and says so.
  it.each([
    ['another worker', true],
    ['the same worker id, retired and registered again', false],
  ])(
    'a stale attempt records neither its start nor its end: the run was started again by %s',
    async (_, other) => {
      t = await testRuntime(START, { dialect });
      const engine = controlledEngine();
      t.rt.engines.register(engine);
      await apply(t.rt, {
        '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
        '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'held'),
      });
      const a = t.worker({ leaseTtlMs: TTL });
      await a.bootstrap();
      let b: Worker = a;
      if (other) {
        const rtB = await t.peer();
        rtB.engines.register(engine);
        b = t.worker({ leaseTtlMs: TTL }, rtB);
        await b.bootstrap();
      }
      // A's batch enters attempt 1's engine, then stalls before it confirms the attempt.
      const late = holdFirstCall(t.rt.repos.lanes, 'currentAttempts', 'before');
      t.clock.set(FIRST);
      const attempt1 = engine.started();
      await a.tick();
      const one = await attempt1;
      await late.reached;
      const stale = await only(t.rt, 'job');
      expect(stale).toMatchObject({ state: 'started', attempt: 1, workerId: a.id });

      if (!other) {
        // A's lease lapses and it is retired; its next heartbeat registers the same id live again.
        t.clock.advance(DEAD_AFTER + 1);
        expect(await t.rt.repos.workers.retireLapsed(t.clock.now(), TTL)).toEqual([a.id]);
        expect(await t.rt.repos.workers.heartbeat(a.id, t.clock.now())).toBe(false);
        expect(await t.rt.repos.workers.live(t.clock.now(), TTL)).toEqual([a.id]);
      }
      // The run is taken over and started again: attempt 2.
      expect(
        await t.rt.repos.runs.transition(
          stale.correlationId,
          'started',
          { state: 'claimed', worker_id: b.id },
          a.id,
        ),
      ).toBe(true);
      const attempt2 = engine.started();
      b.executor.start(
        (await t.rt.repos.runs.get(stale.correlationId)) as PendingRun,
        await effective(t.rt, 'job'),
      );
      const two = await attempt2;
      const current = await only(t.rt, 'job');
      expect(current).toMatchObject({ state: 'started', attempt: 2, workerId: b.id });
      expect(current.fencingToken as number).toBeGreaterThan(stale.fencingToken as number);
      expect(two.request.context).toMatchObject({ fencingToken: current.fencingToken, attempt: 2 });
      // Each attempt's START line came with its start.
      await until(async () => (await feed(t?.rt as Runtime, 'job')).length === 2, "attempt 2's START line");

      // A's late confirmation of attempt 1: not ours any more, so its process stops.
      late.open();
      expect(await one.stopped).toBe('worker-lost');
      await until(() => !a.executor.runsProcess(stale.processId as string), 'attempt 1 returned');
      await until(async () => (await t?.rt.repos.runs.get(stale.correlationId))?.state === 'started');
      // Attempt 1's end (A's engine returned) is not ours either: the direct write says so.
      const end = {
        run: { ...stale, state: 'ended' as const, outcome: 'completed' as const, endedAt: t.clock.now() },
        process: undefined,
        line: feedRow(feedLineOf(stale, 'END', t.clock.now(), 'completed', {})),
        log: undefined,
      };
      expect(await t.rt.repos.runs.endMany([end])).toEqual(new Set());
      expect(
        await a.executor.recorder.endFailed({ ...end.run, outcome: 'failed' as const }, 'started', {}),
      ).toBe(false);
      expect(
        await t.rt.repos.processes.transition(
          current.processId as string,
          ['running'],
          { status: 'paused' },
          stale,
        ),
      ).toBe(false);
      // A late write of its earlier state, as a stalled worker's would be.
      await a.executor.recorder.writeRunLog({ ...stale, outcome: 'pending' } as Run);

      // The run shows attempt 2's records only, and ends with attempt 2's end.
      const during = await only(t.rt, 'job');
      expect(during).toMatchObject({
        state: 'started',
        attempt: 2,
        fencingToken: current.fencingToken,
        processId: current.processId,
        startedAt: current.startedAt,
      });
      const lines = await feed(t.rt, 'job');
      expect(lines.map((l) => [l.line, l.payload.processId])).toEqual([
        ['START pending', stale.processId],
        ['START pending', current.processId],
      ]);
      const pending = await t.rt.repos.documents.get({ tenant: T, project: P, path: stale.logPath });
      expect(pending?.body).toContain(`processId: ${current.processId}`);
      expect(pending?.body).toContain('attempt: 2');

      two.finish();
      await b.executor.settled();
      await a.executor.settled();
      const ended = await only(t.rt, 'job');
      expect(ended).toMatchObject({ state: 'ended', outcome: 'completed', attempt: 2 });
      expect((await feed(t.rt, 'job')).map((l) => [l.line, l.payload.processId])).toEqual([
        ['START pending', stale.processId],
        ['START pending', current.processId],
        ['END completed', current.processId],
      ]);
      const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: stale.logPath });
      expect(log?.body).toContain('outcome: completed');
      expect(log?.body).toContain(`fencingToken: ${current.fencingToken}`);
    },
  );

  it("a lapsed worker that confirms its batch's attempts after another worker ended the run writes nothing more and ends its child at once", async () => {
    t = await testRuntime(START, { dialect });
    const out = join(tempDir(), 'marks');
    await apply(t.rt, {
      '_vance/recipes/long.yaml': shellRecipe(LONG, { out }),
      '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'long'),
    });
    const a = t.worker({ leaseTtlMs: TTL });
    const rtB = await t.peer();
    const b = t.worker({ leaseTtlMs: TTL }, rtB);
    await a.bootstrap();
    await b.bootstrap();
    t.clock.set(FIRST);
    await a.heartbeat();
    // A stalls right after its engines were entered, before it confirms its attempts; its child runs.
    const late = holdFirstCall(t.rt.repos.lanes, 'currentAttempts', 'before');
    await a.tick();
    await late.reached;
    await until(() => marks(out).length === 1, 'the child started');
    const pid = (marks(out)[0] as string).split(' ')[1];
    const started = await only(t.rt, 'job');

    // B finds A's lease lapsed and ends the run worker-lost.
    t.clock.advance(DEAD_AFTER + 1);
    expect(await b.reap()).toEqual({ lost: 1, resumed: 0 });
    const lost = await only(rtB, 'job');
    expect(lost).toMatchObject({ state: 'ended', reason: 'worker-lost' });

    // A's late confirmation: not ours. Its child is ended now, before A's next heartbeat.
    late.open();
    await until(() => marks(out).includes(`term ${pid}`), "the child ended by A's refused confirmation");
    expect(marks(out)).toEqual([`start ${pid}`, `term ${pid}`]);
    await a.executor.settled();
    const after = await only(t.rt, 'job');
    expect(after).toMatchObject({ state: 'ended', reason: 'worker-lost', startedAt: started.startedAt });
    const lines = await feed(t.rt, 'job');
    const endAt = lines.findIndex((l) => l.line.startsWith('END'));
    expect(lines.filter((l) => l.line.startsWith('END')).map((l) => l.line)).toEqual(['END failed']);
    // No START line after the END: A wrote nothing more of its start.
    expect(lines.slice(endAt + 1)).toEqual([]);
    expect(await t.rt.repos.processes.withStatus(['ready', 'running'])).toEqual([]);
    await a.heartbeat();
  });

  it('a lapsed worker whose one-at-a-time start was taken over does not enter its engine', async () => {
    t = await testRuntime(START, { dialect });
    const out = join(tempDir(), 'marks');
    await apply(t.rt, {
      '_vance/recipes/long.yaml': shellRecipe(LONG, { out }),
      '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'long'),
    });
    const a = t.worker({ leaseTtlMs: TTL });
    const rtB = await t.peer();
    const b = t.worker({ leaseTtlMs: TTL }, rtB);
    await a.bootstrap();
    await b.bootstrap();
    t.clock.set(FIRST);
    await a.heartbeat();
    // The batch fails (a store error): the run goes one at a time, and A stalls right after its start.
    vi.spyOn(t.rt.repos.lanes, 'startMany').mockRejectedValueOnce(new Error('connection terminated'));
    const stalled = holdFirstCall(t.rt.repos.lanes, 'admit', 'after');
    await a.tick();
    await stalled.reached;
    expect(await only(t.rt, 'job')).toMatchObject({ state: 'started', attempt: 1, workerId: a.id });

    t.clock.advance(DEAD_AFTER + 1);
    expect(await b.reap()).toEqual({ lost: 1, resumed: 0 });
    stalled.open();
    await a.executor.settled();

    // No child ever started: A found the run was not its own before entering the engine. Its START
    // line came with its start, before B ended the run.
    expect(marks(out)).toEqual([]);
    expect(await only(t.rt, 'job')).toMatchObject({ state: 'ended', reason: 'worker-lost' });
    expect((await feed(t.rt, 'job')).map((l) => l.line)).toEqual(['START pending', 'END failed']);
    expect(await t.rt.repos.processes.withStatus(['ready', 'running'])).toEqual([]);
  });
});
