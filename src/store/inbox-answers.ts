import { sql } from 'kysely';
import type { Store } from './open.js';

/** A question's answer waiting to reach its agent service (issue #25). Instants are UTC ms. */
export interface PendingAnswer {
  readonly id: number;
  readonly correlationId: string;
  readonly answer: string;
  readonly answeredBy: string;
  /** Failed deliveries so far. */
  readonly tries: number;
}

/** What became of an answer (see {@link InboxAnswers.answer}). */
export type AnswerOutcome =
  | { readonly kind: 'answered' }
  | { readonly kind: 'missing' }
  | { readonly kind: 'not-a-question'; readonly itemKind: string }
  | { readonly kind: 'answered-already'; readonly by: string; readonly at: number };

/**
 * The answers of `question` inbox items (issue #25): a blocked agent run's question, answered by
 * its user in the inbox, then delivered to the service that asked.
 */
export class InboxAnswers {
  constructor(private readonly store: Store) {}

  /**
   * Answers item `id` of `user` in `tenant` at `at` (and marks it read): a compare-and-swap, so
   * one answer wins. Says why not otherwise: no such item of the user, not a question, answered.
   */
  async answer(
    tenant: string,
    user: string,
    id: number,
    answer: string,
    by: string,
    at: number,
  ): Promise<AnswerOutcome> {
    const moved = await this.store.db
      .updateTable('inbox')
      .set((eb) => ({
        answer,
        answered_by: by,
        answered_at: at,
        read_at: eb.fn.coalesce('read_at', sql<number>`${at}`),
      }))
      .where('tenant', '=', tenant)
      .where('user_name', '=', user)
      .where('id', '=', id)
      .where('kind', '=', 'question')
      .where('answered_at', 'is', null)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 1) return { kind: 'answered' };
    const row = await this.store.db
      .selectFrom('inbox')
      .select(['kind', 'answered_by', 'answered_at'])
      .where('tenant', '=', tenant)
      .where('user_name', '=', user)
      .where('id', '=', id)
      .executeTakeFirst();
    if (row === undefined) return { kind: 'missing' };
    if (row.kind !== 'question') return { kind: 'not-a-question', itemKind: row.kind };
    return { kind: 'answered-already', by: row.answered_by ?? '', at: Number(row.answered_at) };
  }

  /**
   * The answers not yet delivered whose turn has come at `now` (UTC ms; a delivery that failed
   * waits for its backoff), whose run is still active and handed to the service run that asked
   * (the credential of the asking attempt), at most `limit`, the longest waiting first: an answer
   * its service keeps refusing goes to the back, and holds up no other.
   */
  async pending(now: number, limit: number): Promise<PendingAnswer[]> {
    const rows = await this.store.db
      .selectFrom('inbox')
      .innerJoin('agent_runs', 'agent_runs.correlation_id', 'inbox.correlation_id')
      .innerJoin('runs', 'runs.correlation_id', 'inbox.correlation_id')
      .select(['inbox.id', 'inbox.correlation_id', 'inbox.answer', 'inbox.answered_by', 'inbox.answer_tries'])
      .where('inbox.kind', '=', 'question')
      .where('inbox.answered_at', 'is not', null)
      .where('inbox.answer_delivered_at', 'is', null)
      .where((eb) => eb.or([eb('inbox.next_answer_at', 'is', null), eb('inbox.next_answer_at', '<=', now)]))
      .whereRef('inbox.asked_fencing_token', '=', 'agent_runs.credential_fencing_token')
      .where('agent_runs.reference', 'is not', null)
      .where('runs.state', '=', 'started')
      .whereRef('runs.fencing_token', '=', 'agent_runs.fencing_token')
      .orderBy(sql`coalesce(inbox.next_answer_at, inbox.answered_at)`)
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      correlationId: r.correlation_id as string,
      answer: r.answer ?? '',
      answeredBy: r.answered_by ?? '',
      tries: Number(r.answer_tries),
    }));
  }

  /** Records a delivery of answer `id` its service did not take: the next goes from `nextAt` (UTC ms). */
  async notTaken(id: number, nextAt: number): Promise<void> {
    await this.store.db
      .updateTable('inbox')
      .set((eb) => ({ answer_tries: eb('answer_tries', '+', 1), next_answer_at: nextAt }))
      .where('id', '=', id)
      .where('answer_delivered_at', 'is', null)
      .execute();
  }

  /**
   * The unanswered question the attempt of credential token `askedFencingToken` of run
   * `correlationId` asked, if any (its item id): a run asks one question at a time.
   */
  async openQuestion(correlationId: string, askedFencingToken: number): Promise<number | undefined> {
    const row = await this.store.db
      .selectFrom('inbox')
      .select('id')
      .where('correlation_id', '=', correlationId)
      .where('kind', '=', 'question')
      .where('asked_fencing_token', '=', askedFencingToken)
      .where('answered_at', 'is', null)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.id);
  }

  /** Records that answer `id` reached its service at `at`. */
  async delivered(id: number, at: number): Promise<void> {
    await this.store.db
      .updateTable('inbox')
      .set({ answer_delivered_at: at })
      .where('id', '=', id)
      .where('answer_delivered_at', 'is', null)
      .execute();
  }
}
