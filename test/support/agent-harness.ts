import type { Runtime, RuntimeSettings } from '../../src/runtime/context.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { fireScheduler } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import type { DIALECTS } from './dialects.js';
import { type HookServer, reply, startHookServer } from './hook-server.js';
import { cronScheduler, projectFolder } from './project.js';
import { type TestRuntime, testRuntime } from './runtime.js';
import { until } from './until.js';

/** What an agent service was given for a run: its credential, attempt and fencing token. */
export interface Delivery {
  readonly correlationId: string;
  readonly credential: string;
  readonly attempt: number;
  readonly fencingToken: number;
}

/** Two workers of one store and an agent service that takes every run (202, reference `svc-1`). */
export interface AgentHarness {
  readonly t: TestRuntime;
  readonly service: HookServer;
  /** Worker A's runtime and worker B's (a peer connection), both with a public URL. */
  readonly rtA: Runtime;
  readonly rtB: Runtime;
  readonly a: Worker;
  readonly b: Worker;
  /** Fires scheduler `job` on worker A; the delivery once the service took the run. */
  handOff(): Promise<Delivery>;
}

/** Worker lease of the harness's workers, ms. */
export const HARNESS_LEASE_MS = 5_000;

/**
 * An {@link AgentHarness} on `dialect` (issue #25): recipe `agent` (heartbeatTimeout PT1M) at a
 * hook server that answers 202 and never calls back, so a test speaks for the service through
 * the callback service with the credential the delivery carried; scheduler `job` fires only by
 * hand, with `extra` lines (an overlap policy, …); `settings` over the runtime's. The clock starts
 * at 2026-06-01T08:00:00Z and is the test's to step. Close `t` after the test.
 */
export async function agentHarness(
  dialect: (typeof DIALECTS)[number],
  extra = '',
  settings: Partial<RuntimeSettings> = {},
): Promise<AgentHarness> {
  const t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const service = await startHookServer(reply(202, '{"reference":"svc-1"}'));
  const publicUrl = 'http://127.0.0.1:9/';
  const rtA: Runtime = { ...t.rt, settings: { ...t.rt.settings, publicUrl, ...settings } };
  const peer = await t.peer();
  const rtB: Runtime = { ...peer, settings: { ...peer.settings, publicUrl, ...settings } };
  const recipe = `description: an agent run\nengine: agent\nurl: ${service.origin}/runs\nheartbeatTimeout: PT1M\n`;
  await applyDirectory(
    rtA,
    projectFolder({
      '_vance/recipes/agent.yaml': recipe,
      '_vance/scheduler/job.yaml': cronScheduler('0 0 0 1 1 *', 'agent', extra),
    }),
    'acme',
    'ops',
    libraryActor('ada'),
  );
  const a = t.worker({ leaseTtlMs: HARNESS_LEASE_MS }, rtA);
  const b = t.worker({ leaseTtlMs: HARNESS_LEASE_MS }, rtB);
  await a.bootstrap();
  await b.bootstrap();
  const handOff = async (): Promise<Delivery> => {
    const before = service.received.length;
    const { correlationId } = await fireScheduler(rtA, 'acme', 'ops', 'job');
    await a.reap();
    await a.executor.settled();
    await until(
      async () => (await rtA.repos.agentRuns.getWithHash(correlationId))?.reference === 'svc-1',
      'the service took the run',
    );
    const body = JSON.parse(service.received[before]?.body ?? '{}');
    return {
      correlationId,
      credential: body.callback.credential,
      attempt: body.trigger.attempt,
      fencingToken: body.trigger.fencingToken,
    };
  };
  return { t, service, rtA, rtB, a, b, handOff };
}
