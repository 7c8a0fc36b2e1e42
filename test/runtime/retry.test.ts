import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { startHookServer } from '../support/hook-server.js';
import { httpRecipe } from '../support/http-run.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

// Issue #22 item 6: `retry: {attempts, backoff}` — a failed attempt is tried again, as a new
// attempt of the same run (its own process, feed lines, timeline section and fencing token),
// through the lane, after a backoff that doubles; each attempt counts against the run budget.

const T = 'acme';
const P = 'ops';
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const at = (text: string) => Date.parse(text);

async function setup(dialect: (typeof DIALECTS)[number], retry: string, settings = {}) {
  t = await testRuntime('2026-06-01T08:59:59Z', { dialect, settings });
  const marks = join(tempDir('ursa-retry-'), 'marks');
  // Each attempt marks its number and fencing token; the first two fail.
  const script = `echo "$URSA_ATTEMPT $URSA_FENCING_TOKEN" >> ${marks}; [ "$URSA_ATTEMPT" -ge 3 ]`;
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/flaky.yaml': shellRecipe(script),
      '_vance/scheduler/job.yaml': cronScheduler('0 0 * * * *', 'flaky', retry),
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = t.worker();
  await worker.bootstrap();
  const attempts = () => {
    try {
      return readFileSync(marks, 'utf8').trim().split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  // An attempt has ended once its END line is written: its backoff counts from then.
  const ended = (n: number) =>
    until(
      async () =>
        (await (t as TestRuntime).rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 20)).filter(
          (l) => l.kind === 'END',
        ).length === n,
      `${n} attempt(s) ended`,
    );
  return { t, worker, attempts, ended };
}

describe.each(DIALECTS)('retries on %s (issue #22)', (dialect) => {
  it('tries a failed run again after a doubling backoff, each attempt with its own process, lines and token', async () => {
    const { t, worker, attempts, ended } = await setup(dialect, 'retry:\n  attempts: 3\n  backoff: PT10S\n');
    t.clock.set(at('2026-06-01T09:00:00Z'));
    await worker.heartbeat();
    await worker.tick();
    await ended(1);
    // Its retry is due 10 s after it failed; nothing starts before.
    t.clock.set(at('2026-06-01T09:00:09Z'));
    expect(worker.executor.waitingForInstant).toBe(1);
    expect(attempts()).toHaveLength(1);
    t.clock.set(at('2026-06-01T09:00:10Z'));
    await ended(2);
    // The second waits twice as long: 20 s after it failed.
    t.clock.set(at('2026-06-01T09:00:30Z'));
    await until(async () => attempts().length === 3, 'the third attempt ran');
    await worker.executor.settled();

    // What the processes did: three attempts, each with a larger fencing token.
    const marks = attempts().map((line) => line.split(' ').map(Number));
    expect(marks.map(([n]) => n)).toEqual([1, 2, 3]);
    const tokens = marks.map(([, token]) => token as number);
    expect(tokens[0]).toBeLessThan(tokens[1] as number);
    expect(tokens[1]).toBeLessThan(tokens[2] as number);
    // One run of the occurrence, its latest attempt on its row, the earlier ones beside it.
    const [run, ...others] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 10);
    expect(others).toEqual([]);
    expect([run?.outcome, run?.attempt, run?.fencingToken]).toEqual(['completed', 3, tokens[2]]);
    const earlier = await t.store.db
      .selectFrom('run_attempts')
      .select(['attempt', 'started_at', 'ended_at'])
      .orderBy('attempt')
      .execute();
    expect(earlier.map((a) => [a.attempt, Number(a.started_at), Number(a.ended_at)])).toEqual([
      [1, at('2026-06-01T09:00:00Z'), at('2026-06-01T09:00:00Z')],
      [2, at('2026-06-01T09:00:10Z'), at('2026-06-01T09:00:10Z')],
    ]);
    // Each attempt its process, its START and END lines; the failed ones say when the next is due.
    const processes = await t.store.db
      .selectFrom('processes')
      .select(['status'])
      .orderBy('created_at')
      .execute();
    expect(processes.map((p) => p.status)).toEqual(['failed', 'failed', 'done']);
    const lines = (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 20)).reverse();
    expect(lines.map((l) => `${l.kind} ${l.outcome}`)).toEqual([
      'START pending',
      'END failed',
      'START pending',
      'END failed',
      'START pending',
      'END completed',
    ]);
    expect(lines.filter((l) => l.kind === 'END').map((l) => l.payload.retryAt)).toEqual([
      '2026-06-01T09:00:10Z',
      '2026-06-01T09:00:30Z',
      undefined,
    ]);
    // The run log has a section per attempt.
    const log =
      (await t.rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath ?? '' }))?.body ?? '';
    expect(log).toContain('### Attempt 1');
    expect(log).toContain('the next attempt is due at 2026-06-01T09:00:30Z');
    expect(log).toContain('### Attempt 3');
    expect(log).toContain('TERMINATED outcome=completed');
    await worker.stop();
  });

  it('counts every attempt against the run budget: an attempt over it is not started, and the run ends failed', async () => {
    const { t, worker, attempts, ended } = await setup(dialect, 'retry:\n  attempts: 3\n  backoff: PT10S\n', {
      budget: { runsPerHour: 2, runsPerDay: undefined },
    });
    t.clock.set(at('2026-06-01T09:00:00Z'));
    await worker.heartbeat();
    await worker.tick();
    await ended(1);
    t.clock.set(at('2026-06-01T09:00:10Z'));
    await ended(2);
    t.clock.set(at('2026-06-01T09:00:30Z'));
    await until(
      async () => (await t.rt.repos.runs.listForScheduler(T, P, 'job', 1))[0]?.state === 'ended',
      'the run ended',
    );
    await worker.executor.settled();
    expect(attempts().map((line) => line.split(' ')[0])).toEqual(['1', '2']);
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
    expect([run?.outcome, run?.attempt]).toEqual(['failed', 2]);
    const inbox = await t.store.db.selectFrom('inbox').select(['kind', 'title']).execute();
    expect(inbox.filter((i) => i.kind === 'budget-exceeded').map((i) => i.title)).toEqual([
      'ops reached its budget of 2 runs per hour (from 2026-06-01T09:00:00Z)',
    ]);
    await worker.stop();
  });

  it('an http run keeps its Idempotency-Key across attempts and sends each attempt number and token', async () => {
    t = await testRuntime('2026-06-01T08:59:59Z', { dialect });
    let calls = 0;
    const server = await startHookServer((_request, response) => {
      calls++;
      response.writeHead(calls === 1 ? 503 : 200, { 'Content-Type': 'text/plain' });
      response.end(calls === 1 ? 'busy' : 'ok');
    });
    try {
      await applyDirectory(
        t.rt,
        projectFolder({
          '_vance/recipes/hook.yaml': httpRecipe(`${server.origin}/hook`),
          '_vance/scheduler/job.yaml': cronScheduler(
            '0 0 * * * *',
            'hook',
            'retry: {attempts: 2, backoff: PT5S}\n',
          ),
        }),
        T,
        P,
        libraryActor('alice'),
      );
      const worker = t.worker();
      await worker.bootstrap();
      t.clock.set(at('2026-06-01T09:00:00Z'));
      await worker.tick();
      await until(async () => worker.executor.waitingForInstant === 1, 'the retry waits');
      t.clock.set(at('2026-06-01T09:00:05Z'));
      await until(
        async () => (await t?.rt.repos.runs.listForScheduler(T, P, 'job', 1))?.[0]?.state === 'ended',
        'ended',
      );
      await worker.executor.settled();
      const [first, second] = server.received;
      expect(server.received).toHaveLength(2);
      expect(first?.headers['idempotency-key']).toBe(second?.headers['idempotency-key']);
      const triggers = [first, second].map((r) => JSON.parse(r?.body ?? '').trigger);
      expect(triggers.map((x) => x.attempt)).toEqual([1, 2]);
      expect(triggers[0].fencingToken).toBeLessThan(triggers[1].fencingToken);
      expect(second?.headers['ursa-fencing-token']).toBe(String(triggers[1].fencingToken));
      const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
      expect([run?.outcome, run?.attempt]).toEqual(['completed', 2]);
      await worker.stop();
    } finally {
      await server.close();
    }
  });
});
