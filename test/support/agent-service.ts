import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The reference agent service of `examples/agent-service/` (issue #25). */
const SERVER = fileURLToPath(new URL('../../examples/agent-service/server.mjs', import.meta.url));

/** A run as the reference service shows it (`GET /runs`). */
export interface ServiceRun {
  readonly reference: string;
  readonly idempotencyKey: string;
  readonly correlationId: string;
  /** The attempt and token the service speaks for now: an adoption moves them on. */
  readonly fencingToken: number;
  readonly attempt: number;
  /** The attempt the run was delivered as. */
  readonly delivered: number;
  readonly deliveredToken: number;
  /** The attempts of workers that adopted the run, as callbacks' answers named them. */
  readonly adoptions: readonly { readonly attempt: number; readonly fencingToken: number }[];
  /** Stops and answers refused for a fencing token below the run's. */
  readonly staleRequests?: number;
  readonly credential: string;
  readonly callbackUrl: string;
  readonly heartbeatTimeoutMs?: number;
  readonly calls: readonly { readonly kind: string; readonly status: number }[];
  readonly refused?: { readonly kind: string; readonly status: number };
  readonly over: boolean;
  /** Stopped by the service itself: Ursa did not answer its callbacks for the heartbeat timeout. */
  readonly abandoned?: boolean;
}

/** The reference agent service running as a real process on 127.0.0.1. */
export interface AgentService {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** What it received and did, credentials shown. */
  runs(): Promise<ServiceRun[]>;
  close(): Promise<void>;
}

/** Starts `examples/agent-service/server.mjs` with the running Node on a free port of 127.0.0.1. */
export async function startAgentService(): Promise<AgentService> {
  const child: ChildProcess = spawn(process.execPath, [SERVER, '0'], {
    env: { ...process.env, AGENT_SERVICE_SHOW_CREDENTIALS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [first] = (await once(lines, 'line')) as [string];
  const { listening } = JSON.parse(first) as { listening: number };
  const origin = `http://127.0.0.1:${listening}`;
  return {
    origin,
    runs: async () => (await (await fetch(`${origin}/runs`)).json()) as ServiceRun[],
    close: async () => {
      lines.close();
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
