import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import {
  agentCallbackResultSchema,
  agentCompleteBody,
  agentHeartbeatBody,
  agentOutputBody,
  agentRunParams,
  agentStatusBody,
  problemSchema,
} from '../../contract/index.js';
import { AGENT_CALLBACK_PREFIX } from '../../runtime/hand-off.js';
import { type AgentCallback, applyAgentCallback } from '../../service/agent-callbacks.js';
import type { AppOptions } from '../app.js';
import { bearer } from '../auth.js';

/** The problems a callback may answer: a body of the wrong shape, a credential that does not hold, a stale attempt. */
const CALLBACK_ERRORS = { 400: problemSchema, 401: problemSchema, 409: problemSchema } as const;

const CALLBACKS = [
  {
    kind: 'heartbeat',
    body: agentHeartbeatBody,
    summary: 'An agent service still works on the run (any callback also counts as a heartbeat)',
  },
  {
    kind: 'status',
    body: agentStatusBody,
    summary: "An agent service reports its run's status: running, paused, blocked or suspended",
  },
  {
    kind: 'output',
    body: agentOutputBody,
    summary: "An agent service appends text to its run's output (the run log keeps its last 8 KiB)",
  },
  {
    kind: 'complete',
    body: agentCompleteBody,
    summary: 'An agent service ends its run: done (completed), failed with a reason, or stopped (cancelled)',
  },
] as const;

/**
 * The callbacks of agent services (issue #25): `POST /v1/agent-runs/{runId}/heartbeat`,
 * `/status`, `/output` and `/complete`, each authenticated by the run's credential alone
 * (`Authorization: Bearer <run credential>`, decisions §6) — a bearer token of the API is no
 * credential here, and a run credential opens no other route. The OpenAPI document lists them
 * under the tag `agent protocol`, with the run credential as their own security scheme.
 */
export async function agentRunRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  const hooks = {
    ...(options.promoteWaiting === undefined ? {} : { promoteWaiting: options.promoteWaiting }),
    ...(options.retryAgentRun === undefined ? {} : { retry: options.retryAgentRun }),
  };
  for (const { kind, body, summary } of CALLBACKS) {
    r.post(
      `${AGENT_CALLBACK_PREFIX}/:runId/${kind}`,
      {
        schema: {
          tags: ['agent protocol'],
          summary,
          security: [{ runCredential: [] }],
          params: agentRunParams,
          body: body as z.ZodType,
          response: { 200: agentCallbackResultSchema, ...CALLBACK_ERRORS },
        },
      },
      async (request) =>
        applyAgentCallback(
          rt,
          request.params.runId,
          bearer(request),
          { kind, body: request.body } as AgentCallback,
          hooks,
        ),
    );
  }
}
