/**
 * The words of the REST contract that the store also persists: kept here, below the store and
 * every interface, so the wire schemas ({@link ./index.ts}) and the store's columns name one list
 * (issue #21 item 4). Plain constants: no zod, no I/O.
 */

/**
 * Through what an action came (an audit row's `interface`, also on the wire in a document's
 * history): the REST API, MCP (an agent's tool call, over HTTP or stdio), a local `ursa` command
 * on the store, an application embedding Ursa, or Ursa itself (a fired one-shot moved to the trash).
 */
export const ACTOR_INTERFACES = ['rest', 'mcp', 'cli', 'library', 'ursa'] as const;

/** One of {@link ACTOR_INTERFACES}. */
export type ActorInterface = (typeof ACTOR_INTERFACES)[number];

/** What is done to a document: the actions of its history (versions written, deletes, restores). */
export const DOCUMENT_ACTIONS = ['create', 'update', 'delete', 'restore'] as const;

/** One of {@link DOCUMENT_ACTIONS}. */
export type DocumentAction = (typeof DOCUMENT_ACTIONS)[number];

/** What an inbox item is about (decisions §2). */
export const INBOX_KINDS = [
  'run-failed',
  'one-shot-late',
  'one-shot-refused',
  'document-invalid',
  'scheduler-paused',
  'budget-exceeded',
  'question',
] as const;

/**
 * What an inbox item is about: `run-failed` (a run ended failed, spec §4.1), `one-shot-late` (an
 * `at:` scheduler caught up late, spec §12), `one-shot-refused` (an `at:` scheduler's start was
 * refused and it stays scheduled, spec §10a), `document-invalid` (a scheduler or recipe document
 * failed validation, spec §8), `scheduler-paused` (a scheduler paused itself after failed runs,
 * its `pauseOnFailure`, issue #22), `budget-exceeded` (a project's run budget skipped a run, once per
 * window, issue #22), `question` (a blocked agent run asks its `runAs` user; answered in the inbox,
 * issue #25).
 */
export type InboxKind = (typeof INBOX_KINDS)[number];

/**
 * A run's state as every surface shows it (issue #23): `queued` (due, waiting for its lane or a
 * worker), `running` and the process states an agent reports (`paused`, `blocked`, `suspended`),
 * `ended` (its outcome says how) or `skipped` (never started; its outcome says why). The run log's
 * front matter keeps the outcome `pending` until the end (spec §9a).
 */
export const RUN_STATES = [
  'queued',
  'running',
  'paused',
  'blocked',
  'suspended',
  'ended',
  'skipped',
] as const;

/** One of {@link RUN_STATES}. */
export type RunState = (typeof RUN_STATES)[number];
