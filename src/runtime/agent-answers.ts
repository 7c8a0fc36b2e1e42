import { nextDeliveryAt } from '../decisions/delivery.js';
import type { Runtime } from './context.js';
import { handOffContext, handOffEngine } from './hand-off.js';
import { feedLineOf } from './recorder.js';

/** How many answers one pass delivers. */
const ANSWER_LIMIT = 100;

/**
 * Delivers the answers given in the inbox to the questions of blocked agent runs (issue #25): each
 * goes to its run's service by its engine's `answer` (POST `<url>/<reference>/answer`), and once
 * taken is recorded delivered with an `AGENT` feed line; one not taken is tried again with the
 * backoff of a stop (1 s doubling to a minute), behind the answers waiting longer, until its run
 * ends. Any worker may: a service may
 * get one answer twice, and must take a repeat as the same (its `questionId`). Returns how many
 * were delivered.
 */
export async function deliverAnswers(rt: Runtime, now: number): Promise<number> {
  let delivered = 0;
  for (const pending of await rt.repos.inboxAnswers.pending(now, ANSWER_LIMIT)) {
    const run = await rt.repos.runs.get(pending.correlationId);
    const agentRun = await rt.repos.agentRuns.getWithHash(pending.correlationId);
    if (run?.state !== 'started' || agentRun?.reference == null) continue;
    const loaded = await handOffEngine(rt, run);
    if (loaded?.engine.answer === undefined) continue;
    const sent = await loaded.engine.answer({
      processId: agentRun.processId,
      recipe: loaded.recipe,
      context: handOffContext(run, agentRun.fencingToken, agentRun.attempt),
      reference: agentRun.reference,
      questionId: pending.id,
      answer: pending.answer,
      answeredBy: pending.answeredBy,
    });
    if (!sent.taken) {
      await rt.repos.inboxAnswers.notTaken(pending.id, nextDeliveryAt(now, pending.tries + 1));
      rt.log.warn(
        { scheduler: run.name, correlationId: run.correlationId, inboxId: pending.id, reason: sent.reason },
        'the agent service did not take an answer; retrying',
      );
      continue;
    }
    await rt.repos.inboxAnswers.delivered(pending.id, now);
    await rt.repos.feed.append(
      feedLineOf(run, 'AGENT', now, 'pending', {
        processId: agentRun.processId,
        callback: 'answer-delivered',
        inboxId: pending.id,
        answeredBy: pending.answeredBy,
      }),
    );
    delivered++;
  }
  return delivered;
}
