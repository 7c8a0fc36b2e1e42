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
  readonly kind: 'START' | 'END' | 'SKIPPED';
  readonly refType: 'SCHEDULER';
  readonly refId: string;
  /** The run's correlationId. */
  readonly traceId: string;
  readonly outcome: string;
  readonly logPath: string | null;
  readonly payload: Readonly<Record<string, unknown>>;
}

/**
 * One run of a scheduler as the activity feed tells it (spec §7): its `START` and `END` lines, or
 * its one `SKIPPED` line, joined by traceId. Instants are UTC epoch ms.
 */
export interface FeedRun {
  /** The run's id, the traceId of its lines. */
  readonly correlationId: string;
  /** The scheduler name (the lines' refId). */
  readonly scheduler: string;
  /** `cron`, `at` or `manual`, as the lines say. */
  readonly trigger: string;
  /** The occurrence the run is for (the oldest one, when coalesced). */
  readonly scheduledFor: number;
  /** When the process started: the `START` line's `at`; null for a skipped run. */
  readonly startedAt: number | null;
  /** When it ended: the `END` line's `at`; null while it runs, and for a skipped run. */
  readonly endedAt: number | null;
  /**
   * Spec §9a outcome: the `END` line's (completed, failed, cancelled), the `SKIPPED` line's
   * (skipped_misfire, skipped_overlap, skipped_deleted, skipped_disabled, …), or `pending` while
   * only `START` is there.
   */
  readonly outcome: string;
  /** How long the process ran; null until it ended. */
  readonly durationMs: number | null;
  /** True when the run absorbed later occurrences that were already due (decisions §4). */
  readonly coalesced: boolean;
  /** The newest absorbed occurrence, when coalesced. */
  readonly coalescedUntil: number | null;
  /** Why it failed, was cancelled or was skipped; null otherwise. */
  readonly reason: string | null;
  readonly processId: string | null;
  readonly sessionId: string | null;
  /** The run log document (spec §9a). */
  readonly logPath: string | null;
}

/** One page of {@link Feed.listRuns}. */
export interface FeedRunPage {
  /** Newest first. */
  readonly runs: FeedRun[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly nextCursor: number | null;
}

/** Which runs {@link Feed.listRuns} returns. */
export interface FeedRunOptions {
  /** At most this many runs (a whole number ≥ 1). */
  readonly limit: number;
  /** The `nextCursor` of the previous page; without it the newest runs. */
  readonly before?: number;
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

/** The lines that open a run; every run has at most one (a run that never started has none). */
const OPENING_KINDS = ['START', 'SKIPPED'] as const;

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

const numberOr = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const stringOr = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Joins the lines of one run (ascending by id) into its history entry. */
function toRun(lines: readonly FeedLine[]): FeedRun {
  const first = lines[0] as FeedLine;
  const start = lines.find((l) => l.kind === 'START');
  const skipped = lines.find((l) => l.kind === 'SKIPPED');
  const end = lines.find((l) => l.kind === 'END');
  const opening = start ?? skipped ?? first;
  // Every line carries the occurrence fields (executor `appendLine`); the opening line decides.
  const field = (key: string) => opening.payload[key] ?? lines.find((l) => key in l.payload)?.payload[key];
  const startedAt = start?.at ?? null;
  const endedAt = end?.at ?? null;
  return {
    correlationId: first.traceId,
    scheduler: first.refId,
    trigger: stringOr(field('trigger')) ?? 'unknown',
    scheduledFor: numberOr(field('scheduledFor')) ?? first.at,
    startedAt,
    endedAt,
    outcome: end?.outcome ?? skipped?.outcome ?? (start === undefined ? first.outcome : 'pending'),
    durationMs:
      end === undefined
        ? null
        : (numberOr(end.payload.durationMs) ?? (startedAt === null ? null : end.at - startedAt)),
    coalesced: field('coalesced') === true,
    coalescedUntil: numberOr(field('coalescedUntil')),
    reason: stringOr(end?.payload.reason) ?? stringOr(skipped?.payload.reason),
    processId: stringOr(start?.payload.processId) ?? stringOr(end?.payload.processId),
    sessionId: stringOr(start?.payload.sessionId) ?? stringOr(end?.payload.sessionId),
    logPath: lines.find((l) => l.logPath !== null)?.logPath ?? null,
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

  /**
   * The run history of a scheduler (spec §7), built from its feed lines: one entry per traceId,
   * newest first, at most `limit`, and the cursor of the next page. A run is never split over two
   * pages nor listed twice, however its lines interleave with those of other runs.
   *
   * A run's place is its opening line (`START` or `SKIPPED`; a run has at most one), or its first
   * line when it has none (a claimed run ended without starting has only an `END`). One query
   * takes the page's opening lines (one more, to know whether an older page exists); a second
   * the later lines of those runs, wherever they landed, and the lines of runs without an opening
   * line inside the page; a line inside the page of a run that opened on an older page costs one
   * more indexed lookup (and is left to that page).
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1 or a
   *   `before` that is not a whole number.
   */
  async listRuns(
    tenant: string,
    project: string,
    scheduler: string,
    options: FeedRunOptions,
  ): Promise<FeedRunPage> {
    const limit = checkLimit(options.limit);
    const { before } = options;
    checkCursor(before, 'before');
    const ofRef = () => this.#ofRef(tenant, project, 'SCHEDULER', scheduler);

    let openingQuery = ofRef().selectAll().where('kind', 'in', OPENING_KINDS);
    if (before !== undefined) openingQuery = openingQuery.where('id', '<', before);
    const openings = (
      await openingQuery
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute()
    ).map(toLine);
    const olderOpenings = openings.length > limit;
    // The page covers ids [low, before): every opening line in that range is one of `opened`.
    const opened = openings.slice(0, limit);
    const low = olderOpenings ? (opened[opened.length - 1] as FeedLine).id : 0;
    const runs = new Map<string, { anchor: number; lines: FeedLine[] }>();
    for (const line of opened) {
      if (!runs.has(line.traceId)) runs.set(line.traceId, { anchor: line.id, lines: [] });
      const run = runs.get(line.traceId) as { anchor: number; lines: FeedLine[] };
      run.anchor = Math.min(run.anchor, line.id);
      run.lines.push(line);
    }
    const traces = [...runs.keys()];

    // The later lines of the page's runs (an END may be newer than `before`), and every later
    // line inside the page, whichever run it belongs to.
    let laterQuery = ofRef().selectAll().where('kind', 'not in', OPENING_KINDS).where('id', '>=', low);
    if (before !== undefined) {
      laterQuery = laterQuery.where((eb) =>
        traces.length === 0
          ? eb('id', '<', before)
          : eb.or([eb('trace_id', 'in', traces), eb('id', '<', before)]),
      );
    }
    const unopened = new Map<string, FeedLine[]>();
    for (const line of (await laterQuery.orderBy('id', 'asc').execute()).map(toLine)) {
      const run = runs.get(line.traceId);
      if (run !== undefined) run.lines.push(line);
      else unopened.set(line.traceId, [...(unopened.get(line.traceId) ?? []), line]);
    }
    // A line inside the page of a run that has an older line (its START, mostly: a run that ended
    // after newer ones began) belongs to an older page. Lines below `low` are seen only when the
    // page reaches down to the first line (low = 0), so this asks only otherwise.
    for (const [traceId, lines] of unopened) {
      const older =
        low > 0 &&
        (await ofRef()
          .select('id')
          .where('trace_id', '=', traceId)
          .where('id', '<', low)
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst()) !== undefined;
      if (older) continue;
      runs.set(traceId, { anchor: (lines[0] as FeedLine).id, lines });
    }
    const ordered = [...runs.values()].sort((a, b) => b.anchor - a.anchor);
    const taken = ordered.slice(0, limit);
    const last = taken[taken.length - 1];
    return {
      runs: taken.map((run) => toRun(run.lines.sort((a, b) => a.id - b.id))),
      nextCursor: (olderOpenings || ordered.length > limit) && last !== undefined ? last.anchor : null,
    };
  }
}
