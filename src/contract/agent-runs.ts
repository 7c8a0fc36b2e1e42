import { z } from 'zod';
import { writtenText } from './common.js';

/**
 * The agent callback protocol on the wire (issue #25): what an agent service POSTs to
 * `/v1/agent-runs/{runId}/…` with `Authorization: Bearer <run credential>`. Every body names the
 * attempt it speaks for (its fencing token and attempt number, as the run's start sent them or, once
 * a worker adopted the run, as the answer to a callback named them); a body of another shape, or
 * with a field not listed, is refused with its field path.
 */

/** The run a callback is about: its correlationId, as the callback URL holds it. */
export const agentRunParams = z.object({
  runId: z
    .string()
    .min(1)
    .max(200)
    .describe("The run's correlationId (the last segment of its callback URL)"),
});

const attemptFields = {
  fencingToken: z
    .number()
    .int()
    .positive()
    .describe(
      "The attempt's fencing token, as the run's start sent it (trigger.fencingToken) or the latest callback's answer named it",
    ),
  attempt: z
    .number()
    .int()
    .positive()
    .describe(
      "The attempt number, as the run's start sent it (trigger.attempt) or the latest callback's answer named it",
    ),
};

/**
 * `POST …/status`: the service's run is running, paused, blocked or suspended (spec §4.1); a
 * blocked run may ask its `runAs` user a question, which becomes an item of their inbox.
 */
export const agentStatusBody = z
  .strictObject({
    ...attemptFields,
    status: z.enum(['running', 'paused', 'blocked', 'suspended']),
    message: writtenText(1, 2000).optional().describe('What the run is doing or waiting for'),
    question: writtenText(1, 2000)
      .optional()
      .describe("With blocked: a question for the run's runAs user, asked in their inbox"),
  })
  .superRefine((body, ctx) => {
    if (body.question !== undefined && body.status !== 'blocked')
      ctx.addIssue({ code: 'custom', path: ['question'], message: 'is only for status blocked' });
  });

/** `POST …/heartbeat`: the service still works on the run (every callback also counts as one). */
export const agentHeartbeatBody = z.strictObject({ ...attemptFields });

/** `POST …/output`: text to append to the run's output (the run log keeps its last 8 KiB). */
export const agentOutputBody = z.strictObject({
  ...attemptFields,
  text: writtenText(1, 16_384),
});

/** `POST …/complete`: the run is over: `done` (completed), `failed` (with a reason) or `stopped` (cancelled). */
export const agentCompleteBody = z
  .strictObject({
    ...attemptFields,
    status: z.enum(['done', 'failed', 'stopped']),
    reason: writtenText(1, 2000).optional().describe('Why it failed or stopped; required for failed'),
    summary: writtenText(1, 16_384).optional().describe('What the run did, appended to its output'),
  })
  .superRefine((body, ctx) => {
    if (body.status === 'failed' && body.reason === undefined)
      ctx.addIssue({ code: 'custom', path: ['reason'], message: 'is required when status is failed' });
  });

/** What a callback did. */
export const agentCallbackResultSchema = z.object({
  runId: z.string(),
  state: z.enum(['started', 'ended']).describe('The run after the callback: ended once a complete was taken'),
  status: z
    .string()
    .describe(
      "The run's process status after the callback: running, paused, blocked, suspended, done, failed or stopped",
    ),
  attempt: z
    .number()
    .int()
    .describe("The run's current attempt: larger than the one sent once another worker adopted the run"),
  fencingToken: z
    .number()
    .int()
    .describe("The fencing token of the run's current attempt, for the service's next callbacks"),
});
