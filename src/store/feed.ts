import type { Selectable } from 'kysely';
import type { Store } from './open.js';
import type { FeedTable } from './schema.js';

/** One activity-feed line (spec §7). `at` is UTC epoch ms; `payload` is free-form detail. */
export interface FeedLine {
  readonly id: number;
  readonly tenant: string;
  readonly project: string;
  readonly at: number;
  readonly kind: 'START' | 'END' | 'SKIPPED';
  readonly refType: 'SCHEDULER';
  readonly refId: string;
  readonly traceId: string;
  readonly outcome: string;
  readonly logPath: string | null;
  readonly payload: Readonly<Record<string, unknown>>;
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

/** The activity feed: append lines, and answer the two questions of spec §7. */
export class Feed {
  constructor(private readonly store: Store) {}

  async append(line: Omit<FeedLine, 'id'>): Promise<void> {
    await this.store.db
      .insertInto('feed')
      .values({
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
      })
      .execute();
  }

  /** Lines for one ref, newest first; `beforeId` pages backwards. */
  async listForRef(
    tenant: string,
    project: string,
    refType: FeedLine['refType'],
    refId: string,
    limit: number,
    beforeId?: number,
  ): Promise<FeedLine[]> {
    let query = this.store.db
      .selectFrom('feed')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .where('ref_type', '=', refType)
      .where('ref_id', '=', refId);
    if (beforeId !== undefined) query = query.where('id', '<', beforeId);
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toLine);
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
