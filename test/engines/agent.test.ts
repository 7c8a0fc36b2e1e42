import { describe, expect, it } from 'vitest';
import { createAgentEngine } from '../../src/engines/agent.js';
import type { EngineRequest } from '../../src/engines/engine.js';
import { idempotencyKey } from '../../src/engines/http.js';
import { reply, startHookServer } from '../support/hook-server.js';
import { httpEngineRequest } from '../support/http-run.js';
import { context } from './helpers.js';

// Issue #25: the `agent` engine POSTs the `http` engine's body with the run's callback URL and
// credential, and expects 202 with the service's run reference. A real server on 127.0.0.1.

const CALLBACK = { url: 'http://127.0.0.1:8080/v1/agent-runs/corr-0001', credential: 'ursa_run_test' };

function agentRequest(url: string, callback: EngineRequest['callback'] | null = CALLBACK): EngineRequest {
  const request = httpEngineRequest(url, {
    recipe: { name: 'research', engine: 'agent', heartbeatTimeoutMs: 60_000 },
    context: { ...context, fencingToken: 7, attempt: 2 },
  });
  return callback === null || callback === undefined ? request : { ...request, callback };
}

describe('agent engine (issue #25)', () => {
  it('POSTs the run with its attempt, fencing token, callback URL and credential, and takes 202 with a reference as accepted', async () => {
    const server = await startHookServer(reply(202, '{"reference":"svc-9"}'));
    const result = await createAgentEngine().run(agentRequest(`${server.origin}/runs`));
    expect(result).toEqual({ status: 'accepted', reference: 'svc-9' });
    const [received] = server.received;
    expect(received?.headers['idempotency-key']).toBe(idempotencyKey(context));
    expect(received?.headers['ursa-fencing-token']).toBe('7');
    const body = JSON.parse(received?.body ?? '{}');
    // With the heartbeat timeout: a service that cannot reach Ursa that long stops its run.
    expect(body.callback).toEqual({ ...CALLBACK, heartbeatTimeoutMs: 60_000 });
    expect(body.trigger).toMatchObject({ correlationId: 'corr-0001', fencingToken: 7, attempt: 2 });
    expect(body.recipe).toBe('research');
  });

  it('fails the run on any other answer, saying which', async () => {
    const cases: [number, string, string][] = [
      [200, '{"reference":"svc-1"}', 'expected 202 Accepted, got HTTP 200 OK'],
      [500, 'boom', 'HTTP 500 Internal Server Error'],
      [202, 'accepted', 'the agent service answered 202 without a run reference'],
      [202, '{"reference":""}', 'the agent service answered 202 without a run reference'],
    ];
    for (const [status, body, reason] of cases) {
      const server = await startHookServer(reply(status, body));
      const result = await createAgentEngine().run(agentRequest(`${server.origin}/runs`));
      expect(result.status, `${status} ${body}`).toBe('failed');
      expect(result.reason).toContain(reason);
    }
  });

  it('sends nothing and fails when the server has no public URL to be called back at', async () => {
    const server = await startHookServer(reply(202, '{"reference":"svc-1"}'));
    const result = await createAgentEngine().run(agentRequest(`${server.origin}/runs`, null));
    expect(result).toEqual({
      status: 'failed',
      reason: 'this server has no public URL (publicUrl) for the agent service to call back',
    });
    expect(server.received).toHaveLength(0);
  });

  it('applies the outbound policy to the start, as the http engine does', async () => {
    const server = await startHookServer(reply(202, '{"reference":"svc-1"}'));
    const engine = createAgentEngine({ outbound: { deny: ['127.0.0.0/8'] } });
    const result = await engine.run(agentRequest(`${server.origin}/runs`));
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/^outbound policy refuses 127\.0\.0\.1/);
    expect(server.received).toHaveLength(0);
  });
  it('stops a handed-off run by POSTing its reason to <url>/<reference>/stop; a 2xx is taken, anything else says why', async () => {
    const server = await startHookServer((request, response) => {
      response.writeHead(request.url?.includes('svc-9') ? 200 : 404);
      response.end();
    });
    const engine = createAgentEngine();
    const request = agentRequest(`${server.origin}/runs?team=ops`);
    const stop = {
      processId: request.processId,
      recipe: request.recipe,
      context: request.context,
      reason: 'scheduler-overlap',
    };
    expect(await engine.stop?.({ ...stop, reference: 'svc-9' })).toEqual({ taken: true });
    expect(server.received[0]?.url).toBe('/runs/svc-9/stop?team=ops');
    expect(JSON.parse(server.received[0]?.body ?? '{}')).toEqual({
      reason: 'scheduler-overlap',
      correlationId: 'corr-0001',
      fencingToken: 7,
      attempt: 2,
    });
    expect(await engine.stop?.({ ...stop, reference: 'svc-other' })).toEqual({
      taken: false,
      reason: 'HTTP 404 Not Found',
    });
  });
});
