import { type Attributes, ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  type IdGenerator,
  RandomIdGenerator,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { SpanRecord, TraceIds } from '../runs/trace.js';
import type { Tracer } from '../runtime/tracer.js';

/**
 * The OpenTelemetry adapter of the runtime's tracing port (issue #26 item 3): Ursa's finished
 * {@link SpanRecord}s become SDK spans of a `BasicTracerProvider` (sampler and span limits from
 * the standard `OTEL_*` variables, as the SDK reads them), handed to the given span processors.
 * `startTracing` (./tracing.ts) gives it the OTLP exporter; tests an `InMemorySpanExporter`.
 */

/** The tracer and how to end it: `shutdown()` flushes what is buffered, then stops exporting. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Exports every span recorded so far (its exporter's own timeout applies). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The name of Ursa's instrumentation scope. */
export const TRACER_NAME = 'ursa';

// Random ids, except while a span with fixed ids (a run's) is started: the SDK draws a span's ids
// from the generator synchronously inside `startSpan`, so pinning them around that call is exact.
class PinnedIds implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  pinned: TraceIds | undefined;
  generateTraceId(): string {
    return this.pinned?.traceId ?? this.#random.generateTraceId();
  }
  generateSpanId(): string {
    return this.pinned?.spanId ?? this.#random.generateSpanId();
  }
}

/**
 * A tracer over a new SDK provider with `spanProcessors`, and `resource` (default: service name
 * `ursa`) — the provider is not registered globally: only Ursa's spans go through it.
 */
export function sdkTracing(options: {
  readonly spanProcessors: SpanProcessor[];
  readonly resource?: Resource;
}): Tracing {
  const ids = new PinnedIds();
  const provider = new BasicTracerProvider({
    idGenerator: ids,
    spanProcessors: options.spanProcessors,
    resource: options.resource ?? resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'ursa' }),
  });
  const sdk = provider.getTracer(TRACER_NAME);
  const tracer: Tracer = {
    record(span) {
      try {
        ids.pinned = span.ids;
        let started: ReturnType<typeof sdk.startSpan>;
        try {
          // Dates, not numbers: the SDK reads a small number as a `performance.now()` reading.
          started = sdk.startSpan(
            span.name,
            {
              kind: span.kind === 'server' ? SpanKind.SERVER : SpanKind.INTERNAL,
              startTime: new Date(span.startMs),
              attributes: span.attributes as Attributes,
              root: true,
            },
            ROOT_CONTEXT,
          );
        } finally {
          ids.pinned = undefined;
        }
        for (const event of span.events ?? []) started.addEvent(event.name, new Date(event.atMs));
        if (span.error !== undefined) started.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
        started.end(new Date(span.endMs));
      } catch {
        // A span is worth less than the run it describes: tracing never fails the caller.
      }
    },
  };
  return {
    tracer,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
