import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import { endAgentRun } from '../../src/runtime/agent-end.js';
import type { Runtime } from '../../src/runtime/context.js';
import { applyAgentCallback } from '../../src/service/agent-callbacks.js';
import type { Run } from '../../src/store/runs.js';
import { agentHarness, HARNESS_LEASE_MS } from '../support/agent-harness.js';
import { DIALECTS } from '../support/dialects.js';
import type { TestRuntime } from '../support/runtime.js';

// Decisions §5, issue #25 item 3: an agent run has no child process, so when its worker is lost
// another worker adopts it — the next attempt and a new fencing token — instead of ending it
// worker-lost, as long as its service keeps heartbeating. The service is a hook server that takes
// the run (202) and never calls back: the test speaks for it through the callback service, with
// the credential the delivery carried. Two workers on one store, the clock stepped.

const T = 'acme';
const P = 'ops';
const DEAD_AFTER = HARNESS_LEASE_MS + TAKEOVER_MARGIN_MS;
const HEARTBEAT_TIMEOUT = 60_000;

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const harness = await agentHarness(dialect);
  t = harness.t;
  return harness;
}

const runOf = async (rt: Runtime, id: string) => (await rt.repos.runs.get(id)) as Run;

describe.each(DIALECTS)('agent run adoption on %s (decisions §5, issue #25)', (dialect) => {
  it('adopts the handed-off run of a lost worker with the next attempt and a larger fencing token, never ending it worker-lost; the lost worker writes nothing after', async () => {
    const { t, service, rtA, rtB, a, b, handOff } = await setUp(dialect);
    // A first run, ended, so that tokens below the run's own exist to be tried.
    const first = await handOff();
    await applyAgentCallback(rtA, first.correlationId, first.credential, {
      kind: 'complete',
      body: { attempt: 1, fencingToken: first.fencingToken, status: 'done' },
    });
    const delivered = await handOff();
    expect(delivered.fencingToken).toBeGreaterThan(first.fencingToken);
    const { correlationId } = delivered;
    expect(delivered.attempt).toBe(1);
    const before = await runOf(rtA, correlationId);
    expect(before.workerId).toBe(a.id);

    // A stops renewing its lease; B renews its own and reaps once A's lease and the margin passed.
    t.clock.set(t.clock.now() + DEAD_AFTER + 1);
    await b.heartbeat();
    await b.reap();

    const adopted = await runOf(rtB, correlationId);
    expect([adopted.state, adopted.workerId, adopted.attempt]).toEqual(['started', b.id, 2]);
    const token = adopted.fencingToken as number;
    expect(token).toBeGreaterThan(delivered.fencingToken);
    const agentRun = await rtB.repos.agentRuns.getWithHash(correlationId);
    expect([agentRun?.attempt, agentRun?.fencingToken, agentRun?.reference]).toEqual([
      2,
      adopted.fencingToken,
      'svc-1',
    ]);
    // No new delivery: the service's run goes on under the same credential.
    expect(service.received).toHaveLength(2);
    const lines = await rtB.repos.feed.list(T, P, { traceId: correlationId, kinds: ['AGENT'] }, 10);
    expect(lines.map((l) => [l.payload.callback, l.payload.fromWorker, l.payload.workerId])).toEqual([
      ['adopted', a.id, b.id],
    ]);

    // The service still speaks for the attempt it was given; the answer names the current one.
    const heard = await applyAgentCallback(rtB, correlationId, delivered.credential, {
      kind: 'heartbeat',
      body: { attempt: 1, fencingToken: delivered.fencingToken },
    });
    expect(heard).toMatchObject({ state: 'started', attempt: 2, fencingToken: adopted.fencingToken });
    // A token from before the credential, or beyond the current attempt, is refused.
    for (const body of [
      { attempt: 1, fencingToken: delivered.fencingToken - 1 },
      { attempt: 3, fencingToken: token },
      { attempt: 2, fencingToken: token + 1 },
    ])
      await expect(
        applyAgentCallback(rtB, correlationId, delivered.credential, { kind: 'heartbeat', body }),
      ).rejects.toMatchObject({ code: 'ATTEMPT_STALE' });

    // Worker A, back from a freeze with its old attempt, cannot end the run: it is B's now.
    expect(await endAgentRun(rtA, before, { status: 'failed', reason: 'stale' })).toBe(false);
    expect((await runOf(rtB, correlationId)).state).toBe('started');

    // The service ends it at the current attempt: completed, held by B, never worker-lost.
    const done = await applyAgentCallback(rtB, correlationId, delivered.credential, {
      kind: 'complete',
      body: { attempt: 2, fencingToken: token, status: 'done' },
    });
    expect(done).toMatchObject({ state: 'ended', status: 'done' });
    const ended = await runOf(rtB, correlationId);
    expect([ended.outcome, ended.reason, ended.workerId]).toEqual(['completed', null, b.id]);
    const log = await rtB.repos.documents.get({ tenant: T, project: P, path: ended.logPath });
    expect(log?.body).toContain(`adopted by worker ${b.id}, its worker ${a.id} lost: attempt 2`);
  });

  it('does not adopt the run of a lost worker whose service went silent: it ends heartbeat-timeout', async () => {
    const { t, rtB, b, handOff } = await setUp(dialect);
    const { correlationId } = await handOff();
    t.clock.set(t.clock.now() + HEARTBEAT_TIMEOUT + 1);
    await b.heartbeat();
    await b.reap();
    const run = await runOf(rtB, correlationId);
    expect([run.state, run.outcome, run.reason, run.attempt]).toEqual([
      'ended',
      'failed',
      'heartbeat-timeout',
      1,
    ]);
    const lines = await rtB.repos.feed.list(T, P, { traceId: correlationId, kinds: ['AGENT'] }, 10);
    expect(lines).toEqual([]);
  });
});
