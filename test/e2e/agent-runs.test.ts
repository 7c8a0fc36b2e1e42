import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import type { Runtime } from '../../src/runtime/context.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { fireScheduler, stopProcess } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { type AgentService, type ServiceRun, startAgentService } from '../support/agent-service.js';
import { injectFetch, ursa } from '../support/cli.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #25: the `agent` engine and its callback protocol, end to end, with the reference agent
// service of examples/agent-service/ as a real process and Ursa's REST API on a real port of
// 127.0.0.1 (its callbacks come over HTTP). The scheduling clock is stepped; what the test waits
// for in real time is only the service's own work (steps of 20 ms).

const T = 'acme';
const P = 'ops';

/** An agent recipe POSTing to the service, with a heartbeat timeout of 30 s. */
function agentRecipe(service: AgentService): string {
  return `description: an agent run\nengine: agent\nurl: ${service.origin}/runs\nheartbeatTimeout: PT30S\n`;
}

/** A scheduler that fires only by hand (its cron once a year), with `params`. */
function manualScheduler(params: Record<string, unknown>, extra = '', recipe = 'agent'): string {
  const lines = Object.entries(params).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`);
  return cronScheduler('0 0 0 1 1 *', recipe, `${extra}params:\n${lines.join('\n')}\n`);
}

describe.each(DIALECTS)('agent runs on %s (issue #25)', (dialect) => {
  let t: TestRuntime;
  let rt: Runtime;
  let app: FastifyInstance;
  let service: AgentService;
  let worker: Worker;
  let callbackBase: string;

  beforeAll(async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    // As `ursa serve`: a run a callback ends gives its lane to the waiting run through the worker.
    app = await buildApp({
      rt: t.rt,
      promoteWaiting: (run) => worker.executor.promoteWaiting(run),
      retryAgentRun: (run, reason) => worker.executor.retryHandedOff(run, reason),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    callbackBase = `http://127.0.0.1:${port}`;
    // What `ursa serve` with `publicUrl` has: the worker hands its runs over with this callback URL.
    rt = { ...t.rt, settings: { ...t.rt.settings, publicUrl: callbackBase } };
    service = await startAgentService();
    const entries = await applyDirectory(
      rt,
      projectFolder({
        '_vance/recipes/agent.yaml': agentRecipe(service),
        '_vance/recipes/agent-timed.yaml': `${agentRecipe(service)}timeout: PT20S\n`,
        '_vance/scheduler/timed.yaml': manualScheduler(
          { steps: 500, stepMs: 20, heartbeatMs: 20 },
          '',
          'agent-timed',
        ),
        '_vance/scheduler/steps.yaml': manualScheduler({ steps: 2, stepMs: 20, heartbeatMs: 20 }),
        '_vance/scheduler/silent.yaml': manualScheduler({ silent: true }),
        '_vance/scheduler/flaky.yaml': manualScheduler(
          { steps: 1, stepMs: 10, heartbeatMs: 20, failAttempts: 1 },
          'retry:\n  attempts: 2\n  backoff: PT5S\n',
        ),
        '_vance/scheduler/long.yaml': manualScheduler(
          { steps: 500, stepMs: 20, heartbeatMs: 20 },
          'overlap: cancelPrevious\n',
        ),
        '_vance/scheduler/asks.yaml': manualScheduler({
          steps: 2,
          stepMs: 20,
          heartbeatMs: 20,
          question: 'Which branch?',
        }),
      }),
      T,
      P,
      libraryActor('ada'),
    );
    expect(entries.map((e) => [e.path, e.status])).toEqual([
      ['_vance/recipes/agent-timed.yaml', 'created'],
      ['_vance/recipes/agent.yaml', 'created'],
      ['_vance/scheduler/asks.yaml', 'created'],
      ['_vance/scheduler/flaky.yaml', 'created'],
      ['_vance/scheduler/long.yaml', 'created'],
      ['_vance/scheduler/silent.yaml', 'created'],
      ['_vance/scheduler/steps.yaml', 'created'],
      ['_vance/scheduler/timed.yaml', 'created'],
    ]);
    worker = t.worker(undefined, rt);
    await worker.bootstrap();
  });

  afterAll(async () => {
    await worker?.stop();
    await service?.close();
    await app?.close();
    await t?.close();
  });

  /** Fires `name` by hand, lets the worker dispatch it, and waits until its service took it (202). */
  async function handedOff(name: string): Promise<{ correlationId: string; serviceRun: ServiceRun }> {
    const { correlationId } = await fireScheduler(rt, T, P, name);
    await worker.reap();
    await worker.executor.settled();
    let serviceRun: ServiceRun | undefined;
    await until(async () => {
      serviceRun = (await service.runs()).find((r) => r.correlationId === correlationId);
      return serviceRun !== undefined;
    }, `the service took ${name}`);
    return { correlationId, serviceRun: serviceRun as ServiceRun };
  }

  /** A worker's pass, and what it sends to agent services beside the loop. */
  const pass = async () => {
    await worker.reap();
    await worker.executor.settled();
  };

  const stateOf = async (correlationId: string) => (await t.rt.repos.runs.get(correlationId))?.state;

  function callback(runId: string, kind: string, credential: string, body: object) {
    return app.inject({
      method: 'POST',
      url: `/v1/agent-runs/${runId}/${kind}`,
      headers: { authorization: `Bearer ${credential}` },
      payload: body,
    });
  }

  it('starts a run, gets 202 and the service reference, takes heartbeats and output, and ends it completed when the service says done', async () => {
    const { correlationId, serviceRun } = await handedOff('steps');
    // The start carried the run's attempt, its fencing token and a run credential.
    expect(serviceRun.attempt).toBe(1);
    expect(serviceRun.fencingToken).toBeGreaterThan(0);
    expect(serviceRun.callbackUrl).toBe(`${callbackBase}/v1/agent-runs/${correlationId}`);
    expect(serviceRun.credential).toMatch(/^ursa_run_[A-Za-z0-9_-]{43}$/);
    // Only the credential's hash is stored.
    const stored = await t.rt.repos.agentRuns.getWithHash(correlationId);
    expect(stored?.credentialHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await t.store.db.selectFrom('agent_runs').selectAll().execute())).not.toContain(
      serviceRun.credential,
    );
    await until(async () => (await stateOf(correlationId)) === 'ended', 'the run ended');
    const run = await t.rt.repos.runs.get(correlationId);
    expect([run?.state, run?.outcome, run?.reason]).toEqual(['ended', 'completed', null]);
    const process = await t.rt.repos.processes.get(run?.processId as string);
    expect(process?.status).toBe('done');
    expect(process?.outputTail).toBe('step 1 of 2 done\nstep 2 of 2 done\nfinished 2 steps\n');
    expect((await t.rt.repos.agentRuns.getWithHash(correlationId))?.reference).toBe(serviceRun.reference);
    // Each status report and output is a feed line of the run; its END line says completed.
    const lines = (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'steps', 100)).filter(
      (l) => l.traceId === correlationId,
    );
    const kinds = lines.map((l) => `${l.kind} ${String(l.payload.callback ?? l.outcome)}`).reverse();
    expect(kinds).toEqual(['START pending', 'AGENT status', 'AGENT output', 'AGENT output', 'END completed']);
    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath as string });
    expect(log?.body).toContain('finished 2 steps');
    // The credential of a run that ended opens nothing: refused, and nothing changes.
    const after = await callback(correlationId, 'heartbeat', serviceRun.credential, {
      fencingToken: serviceRun.fencingToken,
      attempt: 1,
    });
    expect([after.statusCode, after.json().code]).toEqual([401, 'UNAUTHENTICATED']);
    expect((await t.rt.repos.runs.get(correlationId))?.outcome).toBe('completed');
  });

  it('ends a run whose service stays silent longer than heartbeatTimeout failed, heartbeat-timeout, and frees its lane (stepped clock)', async () => {
    const { correlationId } = await handedOff('silent');
    expect(await stateOf(correlationId)).toBe('started');
    const since = t.clock.now();
    // Silent for exactly the timeout: still alive.
    t.clock.set(since + 30_000);
    await worker.reap();
    expect(await stateOf(correlationId)).toBe('started');
    // One millisecond more: over.
    t.clock.set(since + 30_001);
    await worker.reap();
    const run = await t.rt.repos.runs.get(correlationId);
    expect([run?.state, run?.outcome, run?.reason]).toEqual(['ended', 'failed', 'heartbeat-timeout']);
    expect((await t.rt.repos.processes.get(run?.processId as string))?.status).toBe('failed');
    const items = await t.rt.repos.inbox.list(T, 'ada', { limit: 100 });
    expect(items.some((i) => i.correlationId === correlationId && i.kind === 'run-failed')).toBe(true);
    // The lane is free: the next fire starts a run.
    const next = await handedOff('silent');
    expect(await stateOf(next.correlationId)).toBe('started');
    t.clock.set(t.clock.now() + 30_001);
    await worker.reap();
    expect((await t.rt.repos.runs.get(next.correlationId))?.reason).toBe('heartbeat-timeout');
  });

  it('refuses a forged credential, another run’s, a stale fencing token or attempt and a body of the wrong shape, changing nothing; a blocked run’s question reaches the inbox and its answer the service', async () => {
    const { correlationId, serviceRun } = await handedOff('asks');
    const run = await t.rt.repos.runs.get(correlationId);
    // The service asked its question: a feed line says so (written after the status), and the
    // process is blocked, still active.
    const blockedLine = async () =>
      (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'asks', 100)).find(
        (l) => l.traceId === correlationId && l.payload.status === 'blocked',
      );
    await until(async () => (await blockedLine()) !== undefined, 'the run is blocked');
    expect((await blockedLine())?.payload.question).toBe('Which branch?');
    expect((await t.rt.repos.processes.get(run?.processId as string))?.status).toBe('blocked');
    const attempt = { fencingToken: serviceRun.fencingToken, attempt: 1 };
    const before = await t.rt.repos.agentRuns.getWithHash(correlationId);
    const other = (await service.runs()).find((r) => r.correlationId !== correlationId);
    const refusals = [
      [await callback(correlationId, 'heartbeat', 'ursa_run_forged', attempt), 401, 'UNAUTHENTICATED'],
      [
        await callback(correlationId, 'complete', other?.credential as string, {
          ...attempt,
          status: 'done',
        }),
        401,
        'UNAUTHENTICATED',
      ],
      [
        await app.inject({
          method: 'POST',
          url: `/v1/agent-runs/${correlationId}/heartbeat`,
          payload: attempt,
        }),
        401,
        'UNAUTHENTICATED',
      ],
      [
        await callback(correlationId, 'complete', serviceRun.credential, {
          ...attempt,
          fencingToken: attempt.fencingToken + 1,
          status: 'done',
        }),
        409,
        'ATTEMPT_STALE',
      ],
      [
        await callback(correlationId, 'complete', serviceRun.credential, {
          ...attempt,
          attempt: 2,
          status: 'done',
        }),
        409,
        'ATTEMPT_STALE',
      ],
      [
        await callback(correlationId, 'status', serviceRun.credential, { ...attempt, status: 'sleeping' }),
        400,
        'VALIDATION_FAILED',
      ],
      [
        await callback(correlationId, 'complete', serviceRun.credential, { ...attempt, status: 'failed' }),
        400,
        'VALIDATION_FAILED',
      ],
      [
        await callback(correlationId, 'heartbeat', serviceRun.credential, { ...attempt, extra: 1 }),
        400,
        'VALIDATION_FAILED',
      ],
    ] as const;
    for (const [res, status, code] of refusals)
      expect([res.statusCode, res.json().code], res.body).toEqual([status, code]);
    // Field paths of the refused shapes.
    expect(JSON.stringify(refusals[5][0].json())).toContain('status');
    expect(JSON.stringify(refusals[6][0].json())).toContain('reason');
    const stale = refusals[3][0].json();
    expect(stale.errors?.[0]?.path).toBe('fencingToken');
    // Nothing changed: the run is active and blocked, its last heartbeat what the service sent.
    expect(await stateOf(correlationId)).toBe('started');
    expect((await t.rt.repos.processes.get(run?.processId as string))?.status).toBe('blocked');
    expect((await t.rt.repos.agentRuns.getWithHash(correlationId))?.credentialHash).toBe(
      before?.credentialHash,
    );
    // The question is an item of the run's user's inbox, linked to the run; ada answers it there.
    const items = await t.rt.repos.inbox.list(T, 'ada', { limit: 100 });
    const question = items.find((i) => i.kind === 'question' && i.correlationId === correlationId);
    expect([question?.title, question?.body, question?.scheduler]).toEqual([
      'asks asks: Which branch?',
      'Which branch?',
      'asks',
    ]);
    const { secret } = await t.rt.repos.tokens.create(
      { tenant: T, role: 'write', user: 'ada' },
      t.clock.now(),
    );
    const answer = (id: number, text: string) =>
      app.inject({
        method: 'POST',
        url: `/brain/${T}/inbox/${id}/answer`,
        headers: { authorization: `Bearer ${secret}` },
        payload: { answer: text },
      });
    // Only a question takes an answer.
    const failedItem = items.find((i) => i.kind === 'run-failed');
    const notQuestion = await answer(failedItem?.id as number, 'main');
    expect([notQuestion.statusCode, notQuestion.json().code]).toEqual([409, 'NOT_A_QUESTION']);
    // ada answers with `ursa inbox answer` against the server (REST underneath).
    const answered = await ursa(
      [
        'inbox',
        'answer',
        String(question?.id),
        'main',
        '--url',
        callbackBase,
        '--token',
        secret,
        '--tenant',
        T,
      ],
      { fetch: injectFetch(app) },
    );
    expect(answered).toEqual({
      code: 0,
      stdout: `answered ${question?.id} as ada; it goes to the agent service at the next pass\n`,
      stderr: '',
    });
    const again = await answer(question?.id as number, 'develop');
    expect([again.statusCode, again.json().code]).toEqual([409, 'CONFLICT']);
    // `ursa inbox --all` shows the answer under the question, who gave it and when.
    const listed = await ursa(
      ['inbox', '--all', '--url', callbackBase, '--token', secret, '--tenant', T, '--user', 'ada'],
      { fetch: injectFetch(app) },
    );
    expect(listed.stdout).toMatch(
      / question +read +asks asks: Which branch\?\n(?:.*\n)*? {4}answered by ada at \S+:\n {6}main\n/,
    );
    // A worker's next pass delivers it to the service, which goes on and completes.
    await worker.reap();
    await until(async () => (await stateOf(correlationId)) === 'ended', 'the run ended');
    const ended = await t.rt.repos.runs.get(correlationId);
    expect(ended?.outcome).toBe('completed');
    expect((await t.rt.repos.processes.get(ended?.processId as string))?.outputTail).toContain(
      'answer: main',
    );
    // The feed shows the question, the answer and who gave it, and its delivery.
    const agentLines = (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'asks', 100))
      .filter((l) => l.traceId === correlationId && l.kind === 'AGENT')
      .map((l) => [l.payload.callback, l.payload.question ?? l.payload.answeredBy ?? null]);
    expect(agentLines).toEqual(
      expect.arrayContaining([
        ['status', 'Which branch?'],
        ['answer', 'ada'],
        ['answer-delivered', 'ada'],
      ]),
    );
    // So does the run log's timeline: the question, who answered, the delivery.
    const log = (await t.rt.repos.documents.get({ tenant: T, project: P, path: ended?.logPath as string }))
      ?.body;
    // (Text a service wrote is a literal code span: it cannot forge the document's structure.)
    expect(log).toMatch(/AGENT +status=blocked question=` Which branch\? `/);
    expect(log).toMatch(/AGENT +answered by ada \(inbox item \d+\)/);
    expect(log).toMatch(/AGENT +answer delivered to the agent service/);
  });
  it('cancelPrevious while an agent run runs: the service gets the stop, the run ends cancelled, and the next starts only after; a stop request ends it too', async () => {
    const first = await handedOff('long');
    // A second fire of a cancelPrevious scheduler: the first is asked to stop, the second waits.
    const second = await fireScheduler(rt, T, P, 'long');
    await worker.reap();
    await worker.executor.settled();
    expect(await stateOf(second.correlationId)).toBe('queued');
    // The next pass sends the stop; the service confirms by its complete callback.
    await worker.reap();
    await until(async () => (await stateOf(first.correlationId)) === 'ended', 'the first run ended');
    const ended = await t.rt.repos.runs.get(first.correlationId);
    expect([ended?.outcome, ended?.reason]).toEqual(['cancelled', 'scheduler-overlap']);
    // The service heard the stop, and its confirmation was taken (its record of the answer may trail the end).
    const completes = async () =>
      (await service.runs())
        .find((r) => r.correlationId === first.correlationId)
        ?.calls.filter((c) => c.kind === 'complete') ?? [];
    await until(async () => (await completes()).length > 0, 'the service recorded its confirmation');
    expect(await completes()).toEqual([{ kind: 'complete', status: 200 }]);
    // The second starts once the first ended, never beside it.
    await until(async () => (await stateOf(second.correlationId)) === 'started', 'the second run started');
    const started = await t.rt.repos.runs.get(second.correlationId);
    expect(started?.startedAt).toBeGreaterThanOrEqual(ended?.endedAt as number);
    await until(
      async () => (await service.runs()).some((r) => r.correlationId === second.correlationId),
      'the service took the second',
    );
    // A stop request (REST, CLI) reaches the service the same way.
    expect(await stopProcess(rt, T, started?.processId as string, 'stopped by ada')).toEqual({
      stopping: true,
    });
    await worker.reap();
    await until(async () => (await stateOf(second.correlationId)) === 'ended', 'the second run ended');
    const stopped = await t.rt.repos.runs.get(second.correlationId);
    expect([stopped?.outcome, stopped?.reason]).toEqual(['cancelled', 'stopped by ada']);
  });

  it('ends a stopping run cancelled when its service never confirms, once the grace period is over (stepped clock)', async () => {
    const { correlationId } = await handedOff('silent');
    const run = await t.rt.repos.runs.get(correlationId);
    await stopProcess(rt, T, run?.processId as string, 'stopped by ada');
    const since = t.clock.now();
    await pass();
    // The silent service took the stop (200) but never confirms: the run is still active.
    expect(await stateOf(correlationId)).toBe('started');
    expect((await t.rt.repos.agentRuns.stopping(10)).map((s) => [s.correlationId, s.stopSentAt])).toEqual([
      [correlationId, since],
    ]);
    t.clock.set(since + rt.settings.shutdownGraceMs);
    await pass();
    const ended = await t.rt.repos.runs.get(correlationId);
    expect([ended?.outcome, ended?.reason]).toEqual(['cancelled', 'stopped by ada']);
  });
  it("stops a run past its recipe's timeout through its service: cancelled, reason timeout (stepped clock)", async () => {
    const { correlationId } = await handedOff('timed');
    const since = t.clock.now();
    t.clock.set(since + 19_999);
    await pass();
    expect(await stateOf(correlationId)).toBe('started');
    t.clock.set(since + 20_000);
    await pass();
    await until(async () => (await stateOf(correlationId)) === 'ended', 'the run ended');
    const ended = await t.rt.repos.runs.get(correlationId);
    expect([ended?.outcome, ended?.reason]).toEqual(['cancelled', 'timeout after 20000 ms']);
  });
  it('retries a run its service reported failed as a new attempt: a new delivery with the same Idempotency-Key, the next attempt and token (stepped clock)', async () => {
    const first = await handedOff('flaky');
    // The service fails attempt 1: the run keeps its lane and waits for its retry, 5 s on.
    await until(
      async () => (await t.rt.repos.agentRuns.getWithHash(first.correlationId))?.reference === null,
      'the failed attempt is off its service',
    );
    expect(await stateOf(first.correlationId)).toBe('started');
    t.clock.set(t.clock.now() + 5_000);
    await until(async () => (await stateOf(first.correlationId)) === 'ended', 'the run ended');
    const run = await t.rt.repos.runs.get(first.correlationId);
    expect([run?.outcome, run?.attempt]).toEqual(['completed', 2]);
    const deliveries = (await service.runs()).filter((r) => r.correlationId === first.correlationId);
    expect(deliveries.map((r) => r.attempt)).toEqual([1, 2]);
    expect(new Set(deliveries.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(deliveries[1]?.fencingToken).toBeGreaterThan(deliveries[0]?.fencingToken as number);
    expect(deliveries[1]?.credential).not.toBe(deliveries[0]?.credential);
  });
});
