import { createHash } from 'node:crypto';
import { formatInstant } from '../time/instant.js';
import type { Run } from './run.js';

/*
 * A run's trace as data (issue #26 item 3): the span every run gets from its claim to its end,
 * built from the run as the store holds it, so that whichever process ends the run — its own
 * worker, or another one that reaped it — records the same span. Its ids are derived from the
 * correlation id, so the `traceparent` handed to the run's engine at its start names the span
 * that is recorded at its end, possibly by another process. Pure: the shell records the result.
 */

/** A span's attributes: OpenTelemetry's primitive values only. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** W3C trace-context ids: 32 and 16 lowercase hexadecimal digits, never all zeros. */
export interface TraceIds {
  readonly traceId: string;
  readonly spanId: string;
}

/** A finished span to record (see the runtime's `Tracer`). Instants are UTC epoch ms. */
export interface SpanRecord {
  readonly name: string;
  /** `server` for a REST request, `internal` for Ursa's own work. */
  readonly kind: 'internal' | 'server';
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: SpanAttributes;
  /** Instants within the span (a run's start). */
  readonly events?: readonly { readonly name: string; readonly atMs: number }[];
  /** Set when the span's work failed: its status is then an error with this message. */
  readonly error?: string;
  /** Fixed ids (a run's, see {@link runTraceIds}); absent: the tracer draws random ones. */
  readonly ids?: TraceIds;
}

/** The name of a run's span. */
export const RUN_SPAN = 'ursa.run';

/**
 * The trace and span ids of the run `correlationId`: the first 48 hex digits of its SHA-256, so
 * every process derives the same ones (a collision of two runs is as likely as one of random ids).
 */
export function runTraceIds(correlationId: string): TraceIds {
  const hex = createHash('sha256').update(correlationId).digest('hex');
  // An all-zero id is invalid in W3C trace context; a hash gives one with probability 2^-64.
  const nonZero = (id: string) => (/^0+$/.test(id) ? `${id.slice(0, -1)}1` : id);
  return { traceId: nonZero(hex.slice(0, 32)), spanId: nonZero(hex.slice(32, 48)) };
}

/**
 * The W3C `traceparent` of the run `correlationId`'s span (version 00, sampled): what its engine
 * is handed, so that an agent's own spans are children of the run's.
 */
export function traceparentOf(correlationId: string): string {
  const { traceId, spanId } = runTraceIds(correlationId);
  return `00-${traceId}-${spanId}-01`;
}

/**
 * The span of a final run (ended or skipped): from its claim (`claimedAt`) to its end (`endedAt`;
 * a run skipped at its claim ends there), with a `started` event at its start, and the attributes
 * the operations docs list. A `failed` run's span is an error with its reason.
 *
 * @param coalescedCount how many later occurrences it absorbed (decisions §4), when known: 0 for
 *   a run that absorbed none; undefined for a coalesced run whose scheduler is not at hand.
 */
export function runSpan(run: Run, coalescedCount: number | undefined): SpanRecord {
  const endMs = Math.max(run.endedAt ?? run.claimedAt, run.claimedAt);
  const count = run.coalesced ? coalescedCount : 0;
  const attributes: Record<string, string | number | boolean> = {
    'ursa.tenant': run.tenant,
    'ursa.project': run.project,
    'ursa.scheduler': run.name,
    'ursa.run.correlation_id': run.correlationId,
    'ursa.run.occurrence': formatInstant(run.scheduledFor),
    'ursa.run.trigger': run.trigger,
    'ursa.run.outcome': run.outcome,
    'ursa.run.attempt': run.attempt,
    'ursa.run.coalesced': run.coalesced,
  };
  if (count !== undefined) attributes['ursa.run.coalesced_count'] = count;
  if (run.coalescedUntil !== null) attributes['ursa.run.coalesced_until'] = formatInstant(run.coalescedUntil);
  if (run.reason !== null) attributes['ursa.run.reason'] = run.reason;
  if (run.workerId !== null) attributes['ursa.worker.id'] = run.workerId;
  if (run.startedAt !== null) attributes['ursa.run.lateness_ms'] = run.startedAt - run.scheduledFor;
  return {
    name: RUN_SPAN,
    kind: 'internal',
    startMs: run.claimedAt,
    endMs,
    attributes,
    ...(run.startedAt === null ? {} : { events: [{ name: 'started', atMs: run.startedAt }] }),
    ...(run.outcome === 'failed' ? { error: run.reason ?? 'failed' } : {}),
    ids: runTraceIds(run.correlationId),
  };
}

/** What one tick of the scheduling loop did (decisions §4), for its span. */
export interface TickCounts {
  readonly due: number;
  readonly claimed: number;
  readonly coalesced: number;
  readonly fired: number;
  readonly skipped: number;
}

/** The name of a tick's span. */
export const TICK_SPAN = 'ursa.tick';

/**
 * The span of one tick of the scheduling loop by `workerId`, from `startMs` to `endMs`: its counts,
 * or (`counts` undefined) an error with `error`, a message Ursa wrote (never a driver's text).
 */
export function tickSpan(
  workerId: string,
  startMs: number,
  endMs: number,
  counts: TickCounts | undefined,
  error?: string,
): SpanRecord {
  const attributes: Record<string, string | number> = { 'ursa.worker.id': workerId };
  if (counts !== undefined) {
    for (const [kind, n] of Object.entries(counts)) attributes[`ursa.tick.${kind}`] = n;
  }
  return {
    name: TICK_SPAN,
    kind: 'internal',
    startMs,
    endMs: Math.max(endMs, startMs),
    attributes,
    ...(counts === undefined ? { error: error ?? 'tick failed' } : {}),
  };
}
