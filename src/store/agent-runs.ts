import { createHash, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { type AdoptionRequest, adoptAgentRun } from './agent-adoption.js';
import { tokenOf } from './fencing.js';
import type { Attempt } from './lane-records.js';
import type { Store } from './open.js';

/** What an agent service last said of its run (issue #25, spec §4.1 process statuses). */
export type AgentServiceStatus = 'running' | 'paused' | 'blocked' | 'suspended';

/** An agent run as the store keeps it, for its latest attempt (issue #25). Instants are UTC ms. */
export interface AgentRunRecord {
  readonly correlationId: string;
  readonly tenant: string;
  readonly project: string;
  readonly processId: string;
  /** The run's current attempt and its fencing token. */
  readonly attempt: number;
  readonly fencingToken: number;
  /**
   * The attempt and token the run credential was given with: the same, unless a worker adopted
   * the run since (decisions §5), which moves the run to a new attempt under the same credential.
   */
  readonly credentialAttempt: number;
  readonly credentialFencingToken: number;
  /** The service's run reference from its 202; null until it answered. */
  readonly reference: string | null;
  readonly heartbeatTimeoutMs: number;
  readonly lastHeartbeatAt: number;
  readonly serviceStatus: AgentServiceStatus;
}

/** An agent run whose stop was requested, with how far the stop's delivery to its service got. UTC ms. */
export interface AgentRunStop extends AgentRunRecord {
  readonly stopRequestedAt: number;
  readonly stopReason: string | null;
  /** When the service took the stop; null until then. */
  readonly stopSentAt: number | null;
  readonly stopTries: number;
  /** When the next send may go; null: at once. */
  readonly nextStopAt: number | null;
}

/** What the store records when an agent run's attempt is handed to its service. */
export interface AgentRunOpening {
  readonly correlationId: string;
  readonly tenant: string;
  readonly project: string;
  readonly processId: string;
  readonly attempt: number;
  readonly fencingToken: number;
  /** The attempt's run credential; only its hash is stored. */
  readonly credential: string;
  readonly heartbeatTimeoutMs: number;
  /** The recipe's `timeout`, ms, or undefined for none. */
  readonly timeoutMs?: number;
  readonly at: number;
}

/** The SHA-256 of a run credential, hex: what the store keeps of it (decisions §6). */
export function hashCredential(credential: string): string {
  return createHash('sha256').update(credential, 'utf8').digest('hex');
}

/**
 * Whether `credential` is the one whose hash is `hash`, compared in constant time over the two
 * hashes (their lengths are fixed), so the time taken says nothing about how much of it matched.
 */
export function credentialMatches(credential: string, hash: string): boolean {
  const given = Buffer.from(hashCredential(credential), 'hex');
  const stored = Buffer.from(hash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

type Row = {
  correlation_id: string;
  tenant: string;
  project: string;
  process_id: string;
  attempt: number | string;
  fencing_token: number | string;
  reference: string | null;
  heartbeat_timeout_ms: number | string;
  last_heartbeat_at: number | string;
  service_status: string;
  credential_hash: string;
  credential_attempt: number | string;
  credential_fencing_token: number | string;
};

function toRecord(row: Row): AgentRunRecord {
  return {
    correlationId: row.correlation_id,
    tenant: row.tenant,
    project: row.project,
    processId: row.process_id,
    attempt: Number(row.attempt),
    fencingToken: tokenOf(row.fencing_token) as number,
    credentialAttempt: Number(row.credential_attempt),
    credentialFencingToken: tokenOf(row.credential_fencing_token) as number,
    reference: row.reference,
    heartbeatTimeoutMs: Number(row.heartbeat_timeout_ms),
    lastHeartbeatAt: Number(row.last_heartbeat_at),
    serviceStatus: row.service_status as AgentServiceStatus,
  };
}

/**
 * The agent runs handed to agent services (issue #25; decisions §5: a run with no child process
 * is owned by the store): one row per run, replaced by each new attempt, so that a callback of an
 * earlier attempt (its credential, its fencing token) no longer matches.
 */
export class AgentRuns {
  constructor(private readonly store: Store) {}

  /**
   * The agent rows of active runs handed to their service at their current attempt: the service
   * answered 202, the run is started, and the row is the attempt the run's row says.
   */
  #handedOff() {
    return this.store.db
      .selectFrom('agent_runs')
      .innerJoin('runs', 'runs.correlation_id', 'agent_runs.correlation_id')
      .where('agent_runs.reference', 'is not', null)
      .where('runs.state', '=', 'started')
      .whereRef('runs.fencing_token', '=', 'agent_runs.fencing_token');
  }

  /** Records the hand-off of a run's attempt (before its service is called), replacing an earlier attempt's. */
  async open(o: AgentRunOpening): Promise<void> {
    const values = {
      correlation_id: o.correlationId,
      tenant: o.tenant,
      project: o.project,
      process_id: o.processId,
      attempt: o.attempt,
      fencing_token: o.fencingToken,
      credential_hash: hashCredential(o.credential),
      credential_attempt: o.attempt,
      credential_fencing_token: o.fencingToken,
      reference: null,
      heartbeat_timeout_ms: o.heartbeatTimeoutMs,
      last_heartbeat_at: o.at,
      service_status: 'running',
      created_at: o.at,
      timeout_ms: o.timeoutMs ?? null,
      stop_sent_at: null,
      stop_tries: 0,
      next_stop_at: null,
    };
    const { correlation_id: _, ...update } = values;
    await this.store.db
      .insertInto('agent_runs')
      .values(values)
      .onConflict((oc) => oc.column('correlation_id').doUpdateSet(update))
      .execute();
  }

  /**
   * Takes the attempt of `fencingToken` off its service: it failed and waits for a retry, so no
   * heartbeat check, stop or answer goes to it any more (its reference cleared), and its
   * credential opens nothing from now on (its hash cleared: no credential hashes to it).
   */
  async retrying(correlationId: string, fencingToken: number): Promise<void> {
    await this.store.db
      .updateTable('agent_runs')
      .set({ reference: null, credential_hash: '' })
      .where('correlation_id', '=', correlationId)
      .where('fencing_token', '=', fencingToken)
      .execute();
  }

  /** Adopts the run of a lost worker (decisions §5): see {@link adoptAgentRun}. */
  adopt(request: AdoptionRequest): Promise<Attempt | undefined> {
    return adoptAgentRun(this.store, request);
  }

  /** Records the service's run reference from its 202, for the attempt of `fencingToken`. */
  async accepted(
    correlationId: string,
    fencingToken: number,
    reference: string,
    at: number,
  ): Promise<boolean> {
    const result = await this.store.db
      .updateTable('agent_runs')
      .set({ reference, last_heartbeat_at: at })
      .where('correlation_id', '=', correlationId)
      .where('fencing_token', '=', fencingToken)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The run's agent row with its credential hash, or undefined. */
  async getWithHash(
    correlationId: string,
  ): Promise<(AgentRunRecord & { readonly credentialHash: string }) | undefined> {
    const row = await this.store.db
      .selectFrom('agent_runs')
      .selectAll()
      .where('correlation_id', '=', correlationId)
      .executeTakeFirst();
    return row === undefined ? undefined : { ...toRecord(row), credentialHash: row.credential_hash };
  }

  /**
   * Records a callback of the attempt of `fencingToken` at `at` (every callback is a heartbeat),
   * with the status it reported, if any. False when the row is another attempt's now.
   */
  async heard(
    correlationId: string,
    fencingToken: number,
    at: number,
    status?: AgentServiceStatus,
  ): Promise<boolean> {
    const result = await this.store.db
      .updateTable('agent_runs')
      .set({ last_heartbeat_at: at, ...(status === undefined ? {} : { service_status: status }) })
      .where('correlation_id', '=', correlationId)
      .where('fencing_token', '=', fencingToken)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Of `correlationIds`, the runs handed to their service at their current attempt (the service
   * answered 202, and the row is the attempt the run's row says): they are owned by the store, and
   * no worker ends them as lost or stranded.
   */
  async handedOff(correlationIds: readonly string[]): Promise<Set<string>> {
    if (correlationIds.length === 0) return new Set();
    const rows = await this.#handedOff()
      .select('agent_runs.correlation_id as id')
      .where('agent_runs.correlation_id', 'in', [...correlationIds])
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /**
   * The active handed-off agent runs whose process a stop was requested for (a `cancelPrevious`
   * run of their scheduler, a stop request), at most `limit`, the oldest request first.
   */
  async stopping(limit: number): Promise<AgentRunStop[]> {
    const rows = await this.#handedOff()
      .innerJoin('processes', 'processes.id', 'agent_runs.process_id')
      .selectAll('agent_runs')
      .select(['processes.stop_requested_at', 'processes.stop_reason'])
      .where('processes.stop_requested_at', 'is not', null)
      .orderBy('processes.stop_requested_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      ...toRecord(row),
      stopRequestedAt: Number(row.stop_requested_at),
      stopReason: row.stop_reason,
      stopSentAt: row.stop_sent_at === null ? null : Number(row.stop_sent_at),
      stopTries: Number(row.stop_tries),
      nextStopAt: row.next_stop_at === null ? null : Number(row.next_stop_at),
    }));
  }

  /**
   * Records a send of the stop to the service for the attempt of `fencingToken`: taken at `at`
   * (`nextAt` undefined), or failed, to be sent again from `nextAt` (UTC ms).
   */
  async stopSent(correlationId: string, fencingToken: number, at: number, nextAt?: number): Promise<void> {
    await this.store.db
      .updateTable('agent_runs')
      .set((eb) =>
        nextAt === undefined
          ? { stop_sent_at: at }
          : { stop_tries: eb('stop_tries', '+', 1), next_stop_at: nextAt },
      )
      .where('correlation_id', '=', correlationId)
      .where('fencing_token', '=', fencingToken)
      .execute();
  }

  /**
   * Active handed-off agent runs past their recipe's `timeout` at `now` (from their hand-off) whose
   * process no stop was requested for yet, at most `limit`: each is asked to stop.
   */
  async overdue(now: number, limit: number): Promise<(AgentRunRecord & { readonly timeoutMs: number })[]> {
    const rows = await this.#handedOff()
      .innerJoin('processes', 'processes.id', 'agent_runs.process_id')
      .selectAll('agent_runs')
      .where('processes.stop_requested_at', 'is', null)
      .where('agent_runs.timeout_ms', 'is not', null)
      .where(sql<boolean>`agent_runs.created_at + agent_runs.timeout_ms <= ${now}`)
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...toRecord(row), timeoutMs: Number(row.timeout_ms) }));
  }

  /** The process ids of the active agent runs handed off (see {@link handedOff}) among `processIds`. */
  async handedOffProcesses(processIds: readonly string[]): Promise<Set<string>> {
    if (processIds.length === 0) return new Set();
    const rows = await this.#handedOff()
      .select('agent_runs.process_id as id')
      .where('agent_runs.process_id', 'in', [...processIds])
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /**
   * The active handed-off agent runs (see {@link handedOff}), at most `limit`, oldest last word
   * first: what a heartbeat check looks at. Every worker reads them; the run's end is a
   * compare-and-swap, so one of them ends each.
   */
  async active(limit: number): Promise<AgentRunRecord[]> {
    const rows = await this.#handedOff()
      .selectAll('agent_runs')
      .orderBy(sql`agent_runs.last_heartbeat_at + agent_runs.heartbeat_timeout_ms`)
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }
}
