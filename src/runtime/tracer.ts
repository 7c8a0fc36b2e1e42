import type { SpanRecord } from '../runs/trace.js';

/**
 * The tracing port (issue #26 item 3): where the shell hands finished spans — a run's, built by
 * `runSpan` from the run as the store holds it, a tick's, a REST request's. Injected into the
 * runtime like the clock and the logger; absent when tracing is off (no `OTEL_*` exporter set),
 * which costs nothing. The OpenTelemetry adapter is `src/app/tracing.ts`.
 */
export interface Tracer {
  /**
   * Records one finished span. Never throws and never waits: an exporter that fails drops spans,
   * it does not fail the run or the request they describe.
   */
  record(span: SpanRecord): void;
}
