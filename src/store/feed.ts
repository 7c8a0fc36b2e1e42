import type { Insertable, Selectable } from 'kysely';
import { UrsaError } from '../errors/index.js';
import type { Store } from './open.js';
import type { FeedTable } from './schema.js';

/** One activity-feed line (spec §7). `at` is UTC epoch ms; `payload` is free-form detail. */
export interface FeedLine {
  /** Ascending in append order; the cursor of every feed page. */
  readonly id: number;
  readonly tenant: string;
  readonly project: string;
  /** UTC epoch ms. */
  readonly at: number;
  /** `AGENT`: a status report or output of an agent run's service (issue #25). */
  readonly kind: 'START' | 'END' | 'SKIPPED' | 'AGENT';
  readonly refType: 'SCHEDULER';
  readonly refId: string;
  /** The run's correlationId. */
  readonly traceId: string;
  readonly outcome: string;
  readonly logPath: string | null;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** The table row of a feed line. */
export function feedRow(line: Omit<FeedLine, 'id'>): Insertable<FeedTable> {
  return {
    tenant: line.tenant,
    project: line.project,
    at: line.at,
    kind: line.kind,
    ref_type: line.refType,
    ref_id: line.refId,
    trace_id: line.traceId,
    outcome: line.outcome,
    log_path: line.logPath,
    payload: JSON.stringify(line.payload),
  };
}

/**
 * @throws UrsaError `ARGUMENT_INVALID` unless `limit` is a whole number ≥ 1 (SQLite reads a
 *   negative LIMIT as "no limit", PostgreSQL refuses it: neither is what a caller meant).
 */
export function checkLimit(limit: number, field = 'limit'): number {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new UrsaError('ARGUMENT_INVALID', `${field}: ${String(limit)} is not a whole number ≥ 1`, {
      field,
      value: limit,
      allowed: 'a whole number ≥ 1',
    });
  }
  return limit;
}

function checkCursor(cursor: number | undefined, field: string): void {
  if (cursor !== undefined && !Number.isSafeInteger(cursor)) {
    throw new UrsaError('ARGUMENT_INVALID', `${field}: ${String(cursor)} is not a feed line id`, {
      field,
      value: cursor,
      allowed: 'a whole number (the nextCursor of a previous page)',
    });
  }
}

function toLine(row: Selectable<FeedTable>): FeedLine {
  return {
    id: Number(row.id),
    tenant: row.tenant,
    project: row.project,
    at: Number(row.at),
    kind: row.kind as FeedLine['kind'],
    refType: row.ref_type as FeedLine['refType'],
    refId: row.ref_id,
    traceId: row.trace_id,
    outcome: row.outcome,
    logPath: row.log_path,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

/**
 * Which feed lines of a project to list: all of them, or only those of one ref (a scheduler), of
 * some kinds, of one run (`traceId`), or written from `since` (inclusive) until `until`
 * (exclusive), UTC epoch ms.
 */
export interface FeedFilter {
  readonly ref?: { readonly type: FeedLine['refType']; readonly id: string } | undefined;
  readonly kinds?: readonly FeedLine['kind'][] | undefined;
  readonly traceId?: string | undefined;
  readonly since?: number | undefined;
  readonly until?: number | undefined;
}

/** The activity feed: append lines, and answer the two questions of spec §7. */
export class Feed {
  constructor(private readonly store: Store) {}

  async append(line: Omit<FeedLine, 'id'>): Promise<void> {
    await this.store.db.insertInto('feed').values(feedRow(line)).execute();
  }

  /** The tenants that have feed lines, sorted (the sweeper asks each for its retention). */
  async tenants(): Promise<string[]> {
    const rows = await this.store.db
      .selectFrom('feed')
      .select('tenant')
      .distinct()
      .orderBy('tenant')
      .execute();
    return rows.map((r) => r.tenant);
  }

  /**
   * Deletes at most `limit` lines of `tenant` older than `before` (`at` < `before`, UTC epoch ms),
   * for the feed retention of spec §12; returns how many. One bounded statement: a caller deletes a
   * large backlog batch by batch (`runtime/sweeper.ts`).
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
   */
  async sweepOlderThan(tenant: string, before: number, limit: number): Promise<number> {
    // Neither dialect has a portable DELETE … LIMIT: delete the ids of one bounded select.
    const batch = this.store.db
      .selectFrom('feed')
      .select('id')
      .where('tenant', '=', tenant)
      .where('at', '<', before)
      .limit(checkLimit(limit));
    const result = await this.store.db.deleteFrom('feed').where('id', 'in', batch).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The lines of one ref; its index is (tenant, project, ref_type, ref_id, id). */
  #ofRef(tenant: string, project: string, refType: FeedLine['refType'], refId: string) {
    return this.store.db
      .selectFrom('feed')
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .where('ref_type', '=', refType)
      .where('ref_id', '=', refId);
  }

  /**
   * Lines for one ref, newest first, at most `limit`; `beforeId` (the smallest id of the previous
   * page) pages backwards.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
   */
  async listForRef(
    tenant: string,
    project: string,
    refType: FeedLine['refType'],
    refId: string,
    limit: number,
    beforeId?: number,
  ): Promise<FeedLine[]> {
    return this.list(tenant, project, { ref: { type: refType, id: refId } }, limit, beforeId);
  }

  /**
   * The lines of one project that pass `filter` (issue #23: the project feed), newest first, at
   * most `limit`, below the line id `beforeId` when given. Indexed by (tenant, project, id) and,
   * with a ref, by (tenant, project, ref_type, ref_id, id).
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1 or a
   *   `beforeId` that is not a whole number.
   */
  async list(
    tenant: string,
    project: string,
    filter: FeedFilter,
    limit: number,
    beforeId?: number,
  ): Promise<FeedLine[]> {
    checkLimit(limit);
    checkCursor(beforeId, 'beforeId');
    let query = this.store.db
      .selectFrom('feed')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', '=', project);
    if (filter.ref !== undefined)
      query = query.where('ref_type', '=', filter.ref.type).where('ref_id', '=', filter.ref.id);
    if (filter.kinds !== undefined && filter.kinds.length > 0)
      query = query.where('kind', 'in', [...filter.kinds]);
    if (filter.traceId !== undefined) query = query.where('trace_id', '=', filter.traceId);
    if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('at', '<', filter.until);
    if (beforeId !== undefined) query = query.where('id', '<', beforeId);
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toLine);
  }

  /**
   * Whether a run (its scheduler and traceId) has a line of `kind`. Reads the scheduler's lines
   * newest first, so a recent run's line is found at once; for recovery paths, not for every run.
   */
  async hasLine(
    run: {
      readonly tenant: string;
      readonly project: string;
      readonly name: string;
      readonly correlationId: string;
    },
    kind: FeedLine['kind'],
  ): Promise<boolean> {
    const row = await this.#ofRef(run.tenant, run.project, 'SCHEDULER', run.name)
      .select('id')
      .where('trace_id', '=', run.correlationId)
      .where('kind', '=', kind)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The newest line for a ref ("when did it last run", spec §7). */
  async latestForRef(
    tenant: string,
    project: string,
    refType: FeedLine['refType'],
    refId: string,
  ): Promise<FeedLine | undefined> {
    return (await this.listForRef(tenant, project, refType, refId, 1))[0];
  }
}
