import { type Kysely, sql } from 'kysely';

// Issue #25: the agent runs handed to an agent service, one row per run (its latest attempt): the
// hash of the attempt's run credential (never the credential), the service's run reference, the
// service's last word (a heartbeat, a status) and how long it may stay silent. The run's own row
// says whether it is still active; the row's attempt and fencing token say whether a callback
// speaks for the run's current attempt (decisions §5, §6). A stop of the run is sent to the service,
// retried with backoff, and recorded here once taken.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_runs')
    .addColumn('correlation_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('project', 'text', (c) => c.notNull())
    .addColumn('process_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('fencing_token', 'bigint', (c) => c.notNull())
    .addColumn('credential_hash', 'text', (c) => c.notNull())
    // The attempt and fencing token the credential was given with: a worker that adopts the run
    // (its own was lost) moves the run to a new attempt and token under the same credential, and
    // the service's callbacks speak for any attempt since (decisions §5).
    .addColumn('credential_attempt', 'integer', (c) => c.notNull())
    .addColumn('credential_fencing_token', 'bigint', (c) => c.notNull())
    .addColumn('reference', 'text')
    .addColumn('heartbeat_timeout_ms', 'bigint', (c) => c.notNull())
    .addColumn('last_heartbeat_at', 'bigint', (c) => c.notNull())
    .addColumn('service_status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // The recipe's `timeout`, ms, from the hand-off: past it the run is asked to stop; null: none.
    .addColumn('timeout_ms', 'bigint')
    // A stop of the run (its process's stop request) sent to the service: when it was taken (2xx),
    // how many sends failed, and when the next may go.
    .addColumn('stop_sent_at', 'bigint')
    .addColumn('stop_tries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_stop_at', 'bigint')
    .execute();
  // A `question` inbox item (a blocked agent run's question) keeps the attempt that asked (its
  // credential's fencing token: the answer goes to that service run only), its answer, who gave
  // it, when, and when the answer reached the service; a delivery the service did not take is
  // tried again with backoff.
  for (const [column, type] of [
    ['asked_fencing_token', 'bigint'],
    ['answer', 'text'],
    ['answered_by', 'text'],
    ['answered_at', 'bigint'],
    ['answer_delivered_at', 'bigint'],
    ['next_answer_at', 'bigint'],
  ] as const)
    await db.schema.alterTable('inbox').addColumn(column, type).execute();
  await db.schema
    .alterTable('inbox')
    .addColumn('answer_tries', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The answers waiting for delivery, read by every worker's pass.
  await sql`create index inbox_answers_pending on inbox (next_answer_at) where kind = 'question' and answered_at is not null and answer_delivered_at is null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index inbox_answers_pending`.execute(db);
  for (const column of [
    'answer_tries',
    'next_answer_at',
    'answer_delivered_at',
    'answered_at',
    'answered_by',
    'answer',
    'asked_fencing_token',
  ])
    await db.schema.alterTable('inbox').dropColumn(column).execute();
  await db.schema.dropTable('agent_runs').execute();
}
