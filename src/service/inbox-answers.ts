import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { feedLineOf } from '../runtime/recorder.js';
import { formatInstant } from '../time/instant.js';

/**
 * Answers a `question` item of `user`'s inbox in `tenant` (issue #25): the question a blocked agent
 * run asked its `runAs` user. The answer is recorded with who gave it (`by`) and when, the item is
 * marked read, and an `AGENT` feed line of the run says it; a worker's next pass delivers it to the
 * service (retried until it takes it), which reports `running` again.
 *
 * @returns the item's id, who answered and when (ISO-8601 UTC).
 * @throws UrsaError `NOT_FOUND` when `user` has no such item; `NOT_A_QUESTION` when the item is
 *   another kind; `CONFLICT` when it was answered already, its run is no longer active, or the
 *   attempt that asked was retried since (its answer would reach a service run that never asked). Nothing
 *   changes when it throws.
 */
export async function answerQuestion(
  rt: Pick<Runtime, 'repos' | 'clock'>,
  tenant: string,
  user: string,
  id: number,
  answer: string,
  by: string,
): Promise<{ id: number; answeredBy: string; answeredAt: string }> {
  const [item] = (await rt.repos.inbox.list(tenant, user, { limit: 1, beforeId: id + 1 })).filter(
    (i) => i.id === id,
  );
  const run = item?.correlationId == null ? undefined : await rt.repos.runs.get(item.correlationId);
  if (item?.kind === 'question' && run?.state !== 'started')
    throw new UrsaError(
      'CONFLICT',
      `inbox item ${id}: its run has ended; the question can no longer be answered`,
      {
        field: 'id',
        value: id,
      },
    );
  // A retry asked its service anew: the attempt that asked is gone, and no one waits for its answer.
  const asker = item?.kind === 'question' && run !== undefined ? item.askedFencingToken : undefined;
  if (asker !== undefined && asker !== null) {
    const agentRun = await rt.repos.agentRuns.getWithHash(run?.correlationId as string);
    if (agentRun?.credentialFencingToken !== asker)
      throw new UrsaError(
        'CONFLICT',
        `inbox item ${id}: the attempt of its run that asked was tried again since; nothing waits for this answer`,
        { field: 'id', value: id },
      );
  }
  const now = rt.clock.now();
  const outcome = await rt.repos.inboxAnswers.answer(tenant, user, id, answer, by, now);
  switch (outcome.kind) {
    case 'missing':
      throw new UrsaError('NOT_FOUND', `inbox item ${id} of ${user} does not exist`, {
        field: 'id',
        value: id,
      });
    case 'not-a-question':
      throw new UrsaError(
        'NOT_A_QUESTION',
        `inbox item ${id} is a ${outcome.itemKind} item, not a question: only a question takes an answer`,
        { field: 'id', value: id, allowed: 'the id of a question item' },
      );
    case 'answered-already':
      throw new UrsaError(
        'CONFLICT',
        `inbox item ${id} was answered already, by ${outcome.by} at ${formatInstant(outcome.at)}`,
        { field: 'id', value: id },
      );
    case 'answered':
      break;
  }
  if (run !== undefined)
    await rt.repos.feed.append(
      feedLineOf(run, 'AGENT', now, 'pending', {
        processId: run.processId,
        callback: 'answer',
        inboxId: id,
        answeredBy: by,
      }),
    );
  return { id, answeredBy: by, answeredAt: formatInstant(now) };
}
