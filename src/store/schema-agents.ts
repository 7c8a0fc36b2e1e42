import type { Generated } from 'kysely';

/* The agent-run table of the store's schema (`src/store/schema.ts`, issue #25). */

/**
 * An agent run handed to its agent service (issue #25), one row per run, for its latest attempt.
 * Instants are UTC ms. The credential itself is never stored: only its SHA-256 (hex).
 */
export interface AgentRunsTable {
  correlation_id: string;
  tenant: string;
  project: string;
  /** The process of the attempt the row is for. */
  process_id: string;
  attempt: number;
  fencing_token: number;
  credential_hash: string;
  /** The attempt and fencing token the credential was given with (an adoption keeps the credential). */
  credential_attempt: number;
  credential_fencing_token: number;
  /** The service's own run reference from its 202; null until it answered. */
  reference: string | null;
  heartbeat_timeout_ms: number;
  /** The service's last callback (any callback is a heartbeat); the hand-off at first. */
  last_heartbeat_at: number;
  /** `running`, `paused`, `blocked` or `suspended`: the service's last status report. */
  service_status: string;
  created_at: number;
  /** The recipe's `timeout`, ms: past `created_at` + it, the run is asked to stop; null: no limit. */
  timeout_ms: number | null;
  /** When the service took the stop of the run (2xx to its stop request); null until then. */
  stop_sent_at: number | null;
  /** How many sends of the stop failed so far. */
  stop_tries: Generated<number>;
  /** When the next send of the stop may go (backoff); null: at once. */
  next_stop_at: number | null;
}
