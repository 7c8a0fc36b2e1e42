import type { Logger } from '../log.js';
import type { Tracing } from './otel-sdk.js';

/**
 * Whether and where Ursa exports traces (issue #26 item 3), from the standard OpenTelemetry
 * variables, so that `ursa serve` and `ursa worker` join the tracing an operator already runs.
 * Off unless an exporter is asked for: then the SDK is not even loaded, and the runtime has no
 * tracer (no span is built).
 */

/** An exporter Ursa starts: OTLP over HTTP with JSON or protobuf bodies, or spans on standard output. */
export type TraceExporterKind = 'otlp-json' | 'otlp-proto' | 'console';

/** What {@link tracingChoice} read: the exporters to start (none: tracing off), and what it ignored. */
export interface TracingChoice {
  readonly exporters: readonly TraceExporterKind[];
  /** Each variable value it could not follow, as a sentence for the log. */
  readonly ignored: readonly string[];
}

type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
};

/**
 * The exporters the environment asks for, pure:
 * - `OTEL_SDK_DISABLED=true`: none.
 * - `OTEL_TRACES_EXPORTER` (comma-separated): `otlp`, `console`; `none` alone turns tracing off;
 *   other names (`zipkin`, …) are ignored.
 * - unset: `otlp` when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is
 *   set, else none — a bare default endpoint is not reason enough to start exporting.
 * - `otlp` speaks `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else
 *   `http/protobuf`; `http/json` is the other one; `grpc` is not supported (ignored).
 */
export function tracingChoice(env: Env): TracingChoice {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return { exporters: [], ignored: [] };
  const ignored: string[] = [];
  const named = set(env.OTEL_TRACES_EXPORTER)
    ?.split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const endpoint = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const wanted = named ?? (endpoint === undefined ? [] : ['otlp']);
  const exporters = new Set<TraceExporterKind>();
  for (const name of wanted) {
    if (name === 'none') continue;
    if (name === 'console') exporters.add('console');
    else if (name === 'otlp') {
      const protocol =
        set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ??
        set(env.OTEL_EXPORTER_OTLP_PROTOCOL) ??
        'http/protobuf';
      if (protocol === 'http/json') exporters.add('otlp-json');
      else if (protocol === 'http/protobuf') exporters.add('otlp-proto');
      else
        ignored.push(
          `OTLP protocol ${JSON.stringify(protocol)} is not supported: use http/protobuf or http/json`,
        );
    } else ignored.push(`trace exporter ${JSON.stringify(name)} is not supported: use otlp, console or none`);
  }
  return { exporters: [...exporters], ignored };
}

/**
 * Starts the OpenTelemetry SDK when {@link tracingChoice} of `env` names an exporter, with a
 * batching span processor per exporter (`OTEL_BSP_*` apply) and the resource of `OTEL_SERVICE_NAME`
 * and `OTEL_RESOURCE_ATTRIBUTES` (default service name `ursa`); the OTLP exporters read their
 * endpoint, headers, timeout and compression from the process's `OTEL_EXPORTER_OTLP_*` variables.
 * The SDK's own warnings (an export that failed) go to `log` at `warn`. Undefined when tracing is
 * off; what it ignored is logged either way.
 */
export async function startTracing(env: Env, log: Logger): Promise<Tracing | undefined> {
  const choice = tracingChoice(env);
  for (const reason of choice.ignored) log.warn({ tracing: reason }, 'a tracing setting was ignored');
  if (choice.exporters.length === 0) return undefined;
  const [{ diag, DiagLogLevel }, resources, base, { sdkTracing }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('./otel-sdk.js'),
  ]);
  diag.setLogger(
    {
      error: (message) => log.warn({ component: 'opentelemetry' }, message),
      warn: (message) => log.warn({ component: 'opentelemetry' }, message),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const exporters = await Promise.all(
    choice.exporters.map(async (kind) => {
      if (kind === 'console') return new base.ConsoleSpanExporter();
      const module =
        kind === 'otlp-json'
          ? await import('@opentelemetry/exporter-trace-otlp-http')
          : await import('@opentelemetry/exporter-trace-otlp-proto');
      return new module.OTLPTraceExporter();
    }),
  );
  const resource = resources
    .resourceFromAttributes({ 'service.name': 'ursa' })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const tracing = sdkTracing({
    spanProcessors: exporters.map((exporter) => new base.BatchSpanProcessor(exporter)),
    resource,
  });
  log.info({ exporters: choice.exporters }, 'tracing on');
  return tracing;
}
