import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentService, startAgentService } from '../support/agent-service.js';
import { DIALECTS, freshDatabase } from '../support/dialects.js';
import { eventually, freePort, type Server, serve } from '../support/server.js';

// Issue #25 (decisions §5): an agent run is owned by the store, not by the process that started it.
// `ursa serve` as a real process (the built bin) is stopped mid-run — SIGTERM, then SIGKILL — and
// started again at the same public URL: the reference service's run goes on, its callbacks reach
// the new server, and the run ends completed, never `worker-lost`.

const P = '/brain/acme/project/ops';

const servers: Server[] = [];
const services: AgentService[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) if (server.child.exitCode === null) server.child.kill('SIGKILL');
  for (const service of services.splice(0)) await service.close();
});

/**
 * A fresh store, the reference agent service, and `start` for `ursa serve` on the store at one port
 * with that public URL (each start a new server); `call` is the REST API with the admin token the
 * first start printed; `fireLong` writes an agent recipe and a long scheduler, and fires it.
 */
async function setUp(dialect: (typeof DIALECTS)[number]) {
  const cwd = mkdtempSync(join(tmpdir(), 'ursa-agent-'));
  const database = await freshDatabase(dialect);
  const service = await startAgentService();
  services.push(service);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let secret = '';
  const start = async () => {
    const server = await serve(cwd, database.location, {
      port,
      env: { URSA_PUBLIC_URL: url },
      waitMs: 30_000,
    });
    servers.push(server);
    // The first start prints the admin token (stderr may trail /healthz on a busy machine).
    secret ||= await eventually(
      async () => /: (ursa_[A-Za-z0-9_-]{43})$/m.exec(server.output().stderr)?.[1],
      'the admin token printed',
      10_000,
    );
    return server;
  };
  const call = async (method: string, path: string, body?: object) => {
    const response = await fetch(`${url}${P}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const fireLong = async (heartbeatTimeout: string, params: Record<string, number>): Promise<string> => {
    const recipe = `description: agent\nengine: agent\nurl: ${service.origin}/runs\nheartbeatTimeout: ${heartbeatTimeout}\n`;
    expect((await call('PUT', '/recipes/agent', { yaml: recipe })).status).toBe(201);
    const lines = Object.entries(params).map(([k, v]) => `  ${k}: ${v}\n`);
    const scheduler = `description: long agent run\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: agent\nparams:\n${lines.join('')}`;
    expect((await call('PUT', '/scheduler/long', { yaml: scheduler })).status).toBe(201);
    const fired = await call('POST', '/scheduler/long/fire');
    expect(fired.status).toBe(202);
    return fired.body.correlationId as string;
  };
  return { database, service, start, call, fireLong };
}

describe.each(DIALECTS)('an agent run across restarts of ursa serve on %s (issue #25)', (dialect) => {
  it('carries on through a SIGTERM and a SIGKILL of the server and ends completed', {
    timeout: 90_000,
  }, async () => {
    const { database, service, start, call, fireLong } = await setUp(dialect);
    try {
      let server = await start();
      const correlationId = await fireLong('PT1M', { steps: 30, stepMs: 200, heartbeatMs: 100 });
      const outputOf = async () => {
        const run = await call('GET', `/runs/${correlationId}`);
        return run.body;
      };
      const steps = async (n: number) =>
        eventually(
          async () =>
            ((await service.runs())[0]?.calls.filter((c) => c.kind === 'output' && c.status === 200).length ??
              0) >= n || undefined,
          `${n} steps reported`,
          20_000,
        );
      await steps(2);
      // A graceful stop is no stop of the run: it goes on while the server is away.
      server.child.kill('SIGTERM');
      expect(await server.exit).toBe(0);
      server = await start();
      await steps(8);
      // A server killed outright: the next one takes the store over once its lease lapsed.
      server.child.kill('SIGKILL');
      await server.exit;
      server = await start();
      const ended = await eventually(
        async () => {
          const run = await outputOf();
          return run.state === 'ended' ? run : undefined;
        },
        'the run ended',
        60_000,
      );
      expect([ended.outcome, ended.reason]).toEqual(['completed', null]);
      const [serviceRun] = await service.runs();
      // One run at the service: neither restart started a second.
      expect((await service.runs()).length).toBe(1);
      expect(serviceRun?.calls.filter((c) => c.kind === 'complete')).toEqual([
        { kind: 'complete', status: 200 },
      ]);
      expect(serviceRun?.refused).toBeUndefined();
      // Each new server adopted the run of the one before (decisions §5): a new attempt and a
      // larger fencing token, which the service took from a callback's answer and spoke for next.
      // The first adoption follows the SIGTERM at once; the second one the lease of the killed server.
      const adoptions = serviceRun?.adoptions ?? [];
      expect(serviceRun?.delivered).toBe(1);
      expect(adoptions[0]?.attempt).toBe(2);
      expect(adoptions.map((a) => a.attempt)).toEqual(adoptions.map((_, i) => i + 2));
      for (let i = 1; i < adoptions.length; i++)
        expect(adoptions[i]?.fencingToken).toBeGreaterThan(adoptions[i - 1]?.fencingToken as number);
      expect(adoptions[0]?.fencingToken).toBeGreaterThan(serviceRun?.deliveredToken as number);
      const log = (await call('GET', `/documents/${ended.logPath as string}`)).body;
      expect(JSON.stringify(log)).toContain('adopted by worker');
    } finally {
      for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
      await Promise.all(servers.map((s) => s.exit));
      await database.drop();
    }
  });

  it('reaches the service when the server does not come back: the service stops the run it cannot report for the heartbeat timeout', {
    timeout: 60_000,
  }, async () => {
    const { database, service, start, fireLong } = await setUp(dialect);
    try {
      const server = await start();
      await fireLong('PT2S', { steps: 300, stepMs: 100, heartbeatMs: 100 });
      await eventually(
        async () =>
          (await service.runs())[0]?.calls.some((c) => c.kind === 'output' && c.status === 200)
            ? true
            : undefined,
        'a step reported',
        20_000,
      );
      expect((await service.runs())[0]?.heartbeatTimeoutMs).toBe(2000);
      // Killed, and never started again: nobody ends or stops the run on Ursa's side.
      server.child.kill('SIGKILL');
      await server.exit;
      const abandoned = await eventually(
        async () => {
          const [run] = await service.runs();
          return run?.abandoned === true ? run : undefined;
        },
        'the service stopped the run',
        20_000,
      );
      expect(abandoned.over).toBe(true);
    } finally {
      await database.drop();
    }
  });
});
