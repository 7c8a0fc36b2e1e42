import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import { buildApp } from '../../src/http/app.js';
import type { Runtime } from '../../src/runtime/context.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyAgentCallback } from '../../src/service/agent-callbacks.js';
import { applyDirectory } from '../../src/service/apply.js';
import { answerQuestion } from '../../src/service/inbox-answers.js';
import { fireScheduler } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import type { Run } from '../../src/store/runs.js';
import { agentHarness, HARNESS_LEASE_MS } from '../support/agent-harness.js';
import { DIALECTS } from '../support/dialects.js';
import { type HookServer, type Received, startHookServer } from '../support/hook-server.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Hostile review of the asynchronous agent protocol (issue #25): each test states what the
// protocol promises (docs/agent-protocol.md) against what a hostile tenant or service tried;
// the findings (F1–F8) were reproduced here first, then fixed.

const DEAD_AFTER = HARNESS_LEASE_MS + TAKEOVER_MARGIN_MS;

let t: TestRuntime | undefined;
const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop().catch(() => {});
  await t?.close();
  t = undefined;
});

const runOf = async (rt: Runtime, id: string) => (await rt.repos.runs.get(id)) as Run;

/** A delivery as the service saw it: what the start POST carried. */
interface Delivery {
  readonly correlationId: string;
  readonly credential: string;
  readonly attempt: number;
  readonly fencingToken: number;
}

function deliveryOf(received: Received): Delivery {
  const body = JSON.parse(received.body);
  return {
    correlationId: body.trigger.correlationId,
    credential: body.callback.credential,
    attempt: body.trigger.attempt,
    fencingToken: body.trigger.fencingToken,
  };
}

/**
 * One store, one worker, a service whose answers the test decides (`handler`), and one agent
 * scheduler `job` per tenant in `tenants` (project ops, runAs the tenant's first user).
 */
async function world(
  dialect: (typeof DIALECTS)[number],
  handler: (request: Received, response: ServerResponse) => void,
  tenants: Record<string, { user: string; path?: string; recipeExtra?: string; schedulerExtra?: string }>,
): Promise<{ rt: Runtime; worker: Worker; service: HookServer; handOff(tenant: string): Promise<Delivery> }> {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const service = await startHookServer(handler);
  const rt: Runtime = { ...t.rt, settings: { ...t.rt.settings, publicUrl: 'http://127.0.0.1:9/' } };
  for (const [tenant, o] of Object.entries(tenants)) {
    const recipe = `description: an agent run\nengine: agent\nurl: ${service.origin}${o.path ?? '/runs'}\nheartbeatTimeout: PT1H\n${o.recipeExtra ?? ''}`;
    await applyDirectory(
      rt,
      projectFolder({
        '_vance/recipes/agent.yaml': recipe,
        '_vance/scheduler/job.yaml': cronScheduler('0 0 0 1 1 *', 'agent', o.schedulerExtra ?? ''),
      }),
      tenant,
      'ops',
      libraryActor(o.user),
    );
  }
  const worker = t.worker(undefined, rt);
  workers.push(worker);
  await worker.bootstrap();
  const handOff = async (tenant: string): Promise<Delivery> => {
    const { correlationId } = await fireScheduler(rt, tenant, 'ops', 'job');
    await worker.reap();
    await worker.executor.settled();
    await until(
      async () => ((await rt.repos.agentRuns.getWithHash(correlationId))?.reference ?? null) !== null,
      'the service took the run',
    );
    const start = service.received.find(
      (r) => r.method === 'POST' && r.body.includes(`"correlationId":"${correlationId}"`),
    );
    return deliveryOf(start as Received);
  };
  return { rt, worker, service, handOff };
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

describe.each(DIALECTS)('hostile: the agent protocol on %s (issue #25)', (dialect) => {
  // ---------------------------------------------------------------------------------------------
  // F1. A failed attempt's credential keeps working while the run waits for its retry.
  // docs/agent-protocol.md, Retries: "the failed attempt's callbacks are refused from then on".
  // authorizeCallback checks the run is started at the row's fencing token, never that the row
  // is still handed off (reference not null): during the whole backoff, the old credential is
  // taken, and a `complete done` ends the run completed (the retry is lost).
  // ---------------------------------------------------------------------------------------------
  it('refuses the callbacks of a failed attempt while its retry waits, and keeps its output (F1)', async () => {
    const h = await agentHarness(dialect, 'retry:\n  attempts: 2\n  backoff: PT5M\n');
    t = h.t;
    workers.push(h.a, h.b);
    const d = await h.handOff();
    const attempt = { attempt: d.attempt, fencingToken: d.fencingToken };
    await applyAgentCallback(h.rtA, d.correlationId, d.credential, {
      kind: 'output',
      body: { ...attempt, text: 'attempt 1 did some work\n' },
    });
    const hooks = { retry: (run: Run, reason: string) => h.a.executor.retryHandedOff(run, reason) };
    const failed = await applyAgentCallback(
      h.rtA,
      d.correlationId,
      d.credential,
      { kind: 'complete', body: { ...attempt, status: 'failed', reason: 'boom' } },
      hooks,
    );
    expect(failed.state).toBe('started'); // the retry was taken: the run waits 5 min for attempt 2
    expect((await h.rtA.repos.agentRuns.getWithHash(d.correlationId))?.reference).toBeNull();
    // The failed attempt's service (or whoever holds its credential) says `done` meanwhile.
    await expect(
      applyAgentCallback(h.rtA, d.correlationId, d.credential, {
        kind: 'complete',
        body: { ...attempt, status: 'done' },
      }),
    ).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await runOf(h.rtA, d.correlationId)).state).toBe('started');
    // The end of attempt 1, recorded by the retry, keeps the output its service sent (F1b).
    const processId = (await runOf(h.rtA, d.correlationId)).processId as string;
    await until(
      async () => (await h.rtA.repos.processes.get(processId))?.status === 'failed',
      "the retry recorded attempt 1's end",
    );
    expect((await h.rtA.repos.processes.get(processId))?.outputTail).toBe('attempt 1 did some work\n');
  });

  // ---------------------------------------------------------------------------------------------
  // F2. A valid callback that races an adoption is refused 401 UNAUTHENTICATED ("the run has
  // ended"), not applied at the new attempt: authorizeCallback reads the agent row and the run row
  // in two statements, and a token mismatch between them is taken for a dead credential. The
  // reference service stops working on a run whose `output` is refused (>= 400) and stops its
  // heartbeats with it, so the run then fails heartbeat-timeout.
  // ---------------------------------------------------------------------------------------------
  it('applies a callback that races an adoption at the new attempt, never 401 (F2)', async () => {
    const h = await agentHarness(dialect);
    t = h.t;
    workers.push(h.a, h.b);
    const d = await h.handOff();
    let adopted = false;
    const real = h.rtB.repos.agentRuns;
    const agentRuns = new Proxy(real, {
      get(target, prop) {
        if (prop === 'getWithHash')
          return async (id: string) => {
            const row = await target.getWithHash(id);
            if (!adopted) {
              adopted = true;
              // Worker A is lost; worker B adopts the run between the two reads of the callback.
              h.t.clock.set(h.t.clock.now() + DEAD_AFTER + 1);
              await h.b.heartbeat();
              await h.b.reap();
            }
            return row;
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const repos = Object.create(h.rtB.repos, { agentRuns: { value: agentRuns } });
    const racing: Runtime = { ...h.rtB, repos };
    const result = applyAgentCallback(racing, d.correlationId, d.credential, {
      kind: 'output',
      body: { attempt: d.attempt, fencingToken: d.fencingToken, text: 'step 1 done\n' },
    });
    await expect(result).resolves.toMatchObject({ state: 'started', attempt: 2 });
  });

  // ---------------------------------------------------------------------------------------------
  // F3. A reference of ".." (or ".") walks the stop and answer URLs out of the recipe's path:
  // encodeURIComponent leaves dots alone and the URL parser resolves dot segments. With the
  // recipe at <service>/tenant-a/runs, reference ".." sends the stop (with the recipe's headers
  // and secret headers) to <service>/tenant-a/stop; "." to <service>/tenant-a/runs/stop.
  // ---------------------------------------------------------------------------------------------
  it('refuses a reference of ".." at the start: the run fails, and nothing goes outside the recipe URL (F3)', async () => {
    const w = await world(
      dialect,
      (request, response) =>
        request.url === '/tenant-a/runs' ? json(response, 202, { reference: '..' }) : json(response, 200, {}),
      { acme: { user: 'ada', path: '/tenant-a/runs' } },
    );
    const { correlationId } = await fireScheduler(w.rt, 'acme', 'ops', 'job');
    await w.worker.reap();
    await w.worker.executor.settled();
    const run = await runOf(w.rt, correlationId);
    expect([run.state, run.outcome]).toEqual(['ended', 'failed']);
    expect(run.reason).toContain('the agent service answered 202 without a run reference');
    expect(w.service.received.map((r) => r.url)).toEqual(['/tenant-a/runs']);
  });

  // ---------------------------------------------------------------------------------------------
  // F4. Cross-tenant starvation of answer delivery. deliverAnswers reads the 100 oldest
  // undelivered answers (ORDER BY inbox.id LIMIT 100), with no backoff and no give-up while their
  // run lives. One tenant whose service refuses its answers (or one run that asked 100 questions)
  // keeps every other tenant's answers from ever being delivered.
  // ---------------------------------------------------------------------------------------------
  it("delivers tenant acme's answer while tenant evil's service refuses its own; evil asks one question at a time and its answer is retried with backoff (F4)", async () => {
    const w = await world(
      dialect,
      (request, response) => {
        if (request.url === '/runs') {
          const tenant = JSON.parse(request.body).trigger.tenant;
          return json(response, 202, { reference: `${tenant}-1` });
        }
        if (request.url.startsWith('/runs/evil-1/')) return json(response, 500, {});
        json(response, 200, {});
      },
      { evil: { user: 'eve' }, acme: { user: 'ada' } },
    );
    const evil = await w.handOff('evil');
    const at = { attempt: evil.attempt, fencingToken: evil.fencingToken };
    await applyAgentCallback(w.rt, evil.correlationId, evil.credential, {
      kind: 'status',
      body: { ...at, status: 'blocked', question: 'q0?' },
    });
    // A second question while the first is open is refused, and nothing changes.
    await expect(
      applyAgentCallback(w.rt, evil.correlationId, evil.credential, {
        kind: 'status',
        body: { ...at, status: 'blocked', question: 'q1?' },
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const questions = (await w.rt.repos.inbox.list('evil', 'eve', { limit: 1000 })).filter(
      (i) => i.kind === 'question',
    );
    expect(questions).toHaveLength(1);
    await answerQuestion(w.rt, 'evil', 'eve', questions[0]?.id as number, 'no', 'eve');
    const acme = await w.handOff('acme');
    await applyAgentCallback(w.rt, acme.correlationId, acme.credential, {
      kind: 'status',
      body: {
        attempt: acme.attempt,
        fencingToken: acme.fencingToken,
        status: 'blocked',
        question: 'Deploy?',
      },
    });
    const [question] = (await w.rt.repos.inbox.list('acme', 'ada', { limit: 10 })).filter(
      (i) => i.kind === 'question',
    );
    await answerQuestion(w.rt, 'acme', 'ada', question?.id as number, 'yes', 'ada');
    // Three passes at one instant: evil's refused answer waits for its backoff, acme's goes.
    for (let pass = 0; pass < 3; pass++) {
      await w.worker.reap();
      await w.worker.executor.settled();
    }
    expect(w.service.received.filter((r) => r.url === '/runs/evil-1/answer')).toHaveLength(1);
    expect(w.service.received.filter((r) => r.url === '/runs/acme-1/answer')).toHaveLength(1);
    // Its backoff over, evil's answer is tried again.
    t?.clock.set((t?.clock.now() ?? 0) + 1000);
    await w.worker.reap();
    await w.worker.executor.settled();
    expect(w.service.received.filter((r) => r.url === '/runs/evil-1/answer')).toHaveLength(2);
  });

  // ---------------------------------------------------------------------------------------------
  // F5. A slow service held every worker's loop: the reap awaited the stops and answers it sent.
  // They go beside the loop now: a reap returns while a service still holds its answer.
  // ---------------------------------------------------------------------------------------------
  it('returns from the reap while an agent service still holds a stop and an answer (F5)', async () => {
    const held: ServerResponse[] = [];
    const w = await world(
      dialect,
      (request, response) => {
        if (request.url === '/runs') return json(response, 202, { reference: 'slow-1' });
        held.push(response);
      },
      { evil: { user: 'eve', recipeExtra: 'timeout: PT1S\n' } },
    );
    const evil = await w.handOff('evil');
    await applyAgentCallback(w.rt, evil.correlationId, evil.credential, {
      kind: 'status',
      body: { attempt: evil.attempt, fencingToken: evil.fencingToken, status: 'blocked', question: 'q?' },
    });
    const [q] = (await w.rt.repos.inbox.list('evil', 'eve', { limit: 10 })).filter(
      (i) => i.kind === 'question',
    );
    await answerQuestion(w.rt, 'evil', 'eve', q?.id as number, 'no', 'eve');
    t?.clock.set((t?.clock.now() ?? 0) + 1001);
    // Past its timeout, the run is asked to stop; the service holds the stop, then the answer.
    await w.worker.reap();
    await until(async () => held.length === 1, 'the stop reached the service');
    expect(w.service.received.at(-1)?.url).toBe('/runs/slow-1/stop');
    // A pass while the delivery is held returns at once and sends nothing more.
    await w.worker.reap();
    expect(held).toHaveLength(1);
    for (const response of held.splice(0)) json(response, 200, {});
    await until(async () => held.length === 1, 'the answer reached the service');
    expect(w.service.received.at(-1)?.url).toBe('/runs/slow-1/answer');
    for (const response of held.splice(0)) json(response, 200, {});
    await w.worker.executor.settled();
  });

  // ---------------------------------------------------------------------------------------------
  // Sound: tenant isolation of questions, answers and callbacks over REST.
  // ---------------------------------------------------------------------------------------------
  it('keeps questions, answers and callbacks within their tenant and run (sound)', async () => {
    const w = await world(
      dialect,
      (request, response) => {
        if (request.url === '/runs') {
          const tenant = JSON.parse(request.body).trigger.tenant;
          return json(response, 202, { reference: `${tenant}-1` });
        }
        json(response, 200, {});
      },
      { acme: { user: 'ada' }, evil: { user: 'eve' } },
    );
    const acme = await w.handOff('acme');
    const evil = await w.handOff('evil');
    await applyAgentCallback(w.rt, acme.correlationId, acme.credential, {
      kind: 'status',
      body: {
        attempt: acme.attempt,
        fencingToken: acme.fencingToken,
        status: 'blocked',
        question: 'Deploy?',
      },
    });
    const [q] = (await w.rt.repos.inbox.list('acme', 'ada', { limit: 10 })).filter(
      (i) => i.kind === 'question',
    );
    const id = q?.id as number;
    const now = t?.clock.now() ?? 0;
    const token = async (
      tenant: string | null,
      role: 'read' | 'write' | 'admin',
      user: string,
      project?: string,
    ) =>
      (await w.rt.repos.tokens.create({ tenant, role, user, ...(project ? { project } : {}) }, now)).secret;
    const app = await buildApp({ rt: w.rt });
    try {
      const answer = (tenant: string, secret: string, body: object) =>
        app.inject({
          method: 'POST',
          url: `/brain/${tenant}/inbox/${id}/answer`,
          headers: { authorization: `Bearer ${secret}` },
          payload: body,
        });
      const cases: [string, Awaited<ReturnType<typeof answer>>, number, string][] = [
        [
          'evil write token, acme path',
          await answer('acme', await token('evil', 'write', 'eve'), { answer: 'x' }),
          404,
          'NOT_FOUND',
        ],
        [
          'evil admin, own path, acme item, user ada',
          await answer('evil', await token('evil', 'admin', 'eve'), { answer: 'x', user: 'ada' }),
          404,
          'NOT_FOUND',
        ],
        [
          'acme write token of another user',
          await answer('acme', await token('acme', 'write', 'bob'), { answer: 'x' }),
          404,
          'NOT_FOUND',
        ],
        [
          'acme write token of another user naming ada',
          await answer('acme', await token('acme', 'write', 'bob'), { answer: 'x', user: 'ada' }),
          403,
          'FORBIDDEN',
        ],
        [
          'acme read token of ada',
          await answer('acme', await token('acme', 'read', 'ada'), { answer: 'x' }),
          403,
          'FORBIDDEN',
        ],
        [
          'acme project-scoped token of ada',
          await answer('acme', await token('acme', 'write', 'ada', 'ops'), { answer: 'x' }),
          404,
          'NOT_FOUND',
        ],
        [
          'the run credential as an API token',
          await answer('acme', acme.credential, { answer: 'x' }),
          401,
          'UNAUTHENTICATED',
        ],
      ];
      for (const [what, res, status, code] of cases)
        expect([what, res.statusCode, res.json().code]).toEqual([what, status, code]);
      // Nothing was answered.
      expect(
        (await w.rt.repos.inbox.list('acme', 'ada', { limit: 10 })).find((i) => i.id === id)?.answer ?? null,
      ).toBeNull();
      const callback = (runId: string, secret: string) =>
        app.inject({
          method: 'POST',
          url: `/v1/agent-runs/${runId}/heartbeat`,
          headers: { authorization: `Bearer ${secret}` },
          payload: { attempt: 1, fencingToken: acme.fencingToken },
        });
      const refused = [
        await callback(acme.correlationId, evil.credential),
        await callback(acme.correlationId, await token('acme', 'admin', 'ada')),
        await callback(acme.correlationId, await token(null, 'admin', 'root')),
        await callback('run_does_not_exist', acme.credential),
      ];
      for (const r of refused)
        expect([r.statusCode, r.json().detail]).toEqual([401, refused[0]?.json().detail]);
    } finally {
      await app.close();
    }
  });

  // ---------------------------------------------------------------------------------------------
  // F6. Concurrent `output` callbacks lose text: appendOutput reads the process's tail, then
  // writes tail + text, with no transaction or compare on the tail between them.
  // ---------------------------------------------------------------------------------------------
  // The class of F5 at the start: a service that holds its 202 must not hold other tenants' runs.
  it("hands acme's run to its service while evil's service still holds the start of its own (F5's class)", async () => {
    const held: ServerResponse[] = [];
    const w = await world(
      dialect,
      (request, response) => {
        const tenant = JSON.parse(request.body).trigger.tenant;
        if (tenant === 'evil') return held.push(response);
        json(response, 202, { reference: `${tenant}-1` });
      },
      { evil: { user: 'eve' }, acme: { user: 'ada' } },
    );
    const evil = await fireScheduler(w.rt, 'evil', 'ops', 'job');
    const acme = await fireScheduler(w.rt, 'acme', 'ops', 'job');
    await w.worker.reap();
    await until(async () => held.length === 1, "evil's start reached its service");
    await until(
      async () => (await w.rt.repos.agentRuns.getWithHash(acme.correlationId))?.reference === 'acme-1',
      "acme's run was handed off while evil's start is held",
    );
    expect((await w.rt.repos.agentRuns.getWithHash(evil.correlationId))?.reference ?? null).toBeNull();
    for (const response of held.splice(0)) json(response, 202, { reference: 'evil-1' });
    await w.worker.executor.settled();
    expect((await w.rt.repos.agentRuns.getWithHash(evil.correlationId))?.reference).toBe('evil-1');
  });

  it('keeps every line of concurrent output callbacks (F6)', async () => {
    const h = await agentHarness(dialect);
    t = h.t;
    workers.push(h.a, h.b);
    const d = await h.handOff();
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i}\n`);
    await Promise.all(
      lines.map((text) =>
        applyAgentCallback(h.rtA, d.correlationId, d.credential, {
          kind: 'output',
          body: { attempt: d.attempt, fencingToken: d.fencingToken, text },
        }),
      ),
    );
    const run = await runOf(h.rtA, d.correlationId);
    const tail = (await h.rtA.repos.processes.get(run.processId as string))?.outputTail ?? '';
    for (const line of lines) expect(tail).toContain(line);
  });

  // ---------------------------------------------------------------------------------------------
  // F7. The answer to a question of an earlier attempt is delivered to the next attempt's
  // service run (pending() joins on the run only): a new service run gets an answer to a question
  // it never asked, and the reference service takes any answer for whatever it waits on now.
  // Replayed `blocked` statuses make duplicate inbox items, each answer delivered separately.
  // ---------------------------------------------------------------------------------------------
  it("does not take an answer to attempt 1's question once attempt 2 runs, nor deliver it (F7)", async () => {
    let n = 0;
    const w = await world(
      dialect,
      (request, response) => {
        if (request.url === '/runs') return json(response, 202, { reference: `svc-${++n}` });
        json(response, 200, {});
      },
      { acme: { user: 'ada', schedulerExtra: 'retry:\n  attempts: 2\n  backoff: PT1S\n' } },
    );
    const first = await w.handOff('acme');
    const at1 = { attempt: first.attempt, fencingToken: first.fencingToken };
    await applyAgentCallback(w.rt, first.correlationId, first.credential, {
      kind: 'status',
      body: { ...at1, status: 'blocked', question: 'Drop the staging database?' },
    });
    await applyAgentCallback(
      w.rt,
      first.correlationId,
      first.credential,
      { kind: 'complete', body: { ...at1, status: 'failed', reason: 'crashed' } },
      { retry: (run, reason) => w.worker.executor.retryHandedOff(run, reason) },
    );
    t?.clock.set((t?.clock.now() ?? 0) + 1000);
    await until(
      async () => (await w.rt.repos.agentRuns.getWithHash(first.correlationId))?.reference === 'svc-2',
      'attempt 2 was handed off',
    );
    const [question] = (await w.rt.repos.inbox.list('acme', 'ada', { limit: 10 })).filter(
      (i) => i.kind === 'question',
    );
    // The old question takes no answer any more: attempt 2's service run never asked it.
    await expect(
      answerQuestion(w.rt, 'acme', 'ada', question?.id as number, 'yes', 'ada'),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await w.worker.reap();
    await w.worker.executor.settled();
    expect(w.service.received.some((r) => r.url === '/runs/svc-2/answer')).toBe(false);
  });

  // ---------------------------------------------------------------------------------------------
  // F8. Control characters: callback texts (question, message, text, reason, summary) and answers
  // take any code point. ESC sequences reach the terminal of `ursa inbox` as they are; a lone CR
  // in a question's first line rewrites the line printed. On PostgreSQL a NUL fails the insert
  // after the process already took the status: a 500, the process `blocked`, no inbox item.
  // ---------------------------------------------------------------------------------------------
  it('refuses a question with terminal escapes with 400 and changes nothing (F8)', async () => {
    const h = await agentHarness(dialect);
    t = h.t;
    workers.push(h.a, h.b);
    const d = await h.handOff();
    const app = await buildApp({ rt: h.rtA });
    try {
      const response = await app.inject({
        method: 'POST',
        url: `/v1/agent-runs/${d.correlationId}/status`,
        headers: { authorization: `Bearer ${d.credential}` },
        payload: {
          attempt: d.attempt,
          fencingToken: d.fencingToken,
          status: 'blocked',
          question: 'Deploy?\u001b]52;c;ZWNobyBwd25lZA==\u0007ok',
        },
      });
      expect([response.statusCode, response.json().code]).toEqual([400, 'VALIDATION_FAILED']);
      expect(response.json().errors?.[0]?.path).toBe('body.question');
      expect(
        (await h.rtA.repos.inbox.list('acme', 'ada', { limit: 10 })).filter((i) => i.kind === 'question'),
      ).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('refuses a NUL in a question with 400 and changes nothing (F8)', async () => {
    const h = await agentHarness(dialect);
    t = h.t;
    workers.push(h.a, h.b);
    const d = await h.handOff();
    const run = await runOf(h.rtA, d.correlationId);
    const app = await buildApp({ rt: h.rtA });
    try {
      const response = await app.inject({
        method: 'POST',
        url: `/v1/agent-runs/${d.correlationId}/status`,
        headers: { authorization: `Bearer ${d.credential}` },
        payload: {
          attempt: d.attempt,
          fencingToken: d.fencingToken,
          status: 'blocked',
          question: 'a\u0000b',
        },
      });
      expect([response.statusCode, response.json().code]).toEqual([400, 'VALIDATION_FAILED']);
      expect((await h.rtA.repos.processes.get(run.processId as string))?.status).toBe('running');
    } finally {
      await app.close();
    }
  });
});
