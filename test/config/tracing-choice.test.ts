import { describe, expect, it } from 'vitest';
import { tracingChoice } from '../../src/app/tracing.js';

// Issue #26 item 3: traces follow OpenTelemetry's standard variables, and are off when none asks.

describe('which trace exporters the OTEL_* variables ask for (issue #26 item 3)', () => {
  it.each([
    ['nothing set', {}, []],
    ['only a service name', { OTEL_SERVICE_NAME: 'ursa-eu' }, []],
    [
      'an OTLP endpoint: protobuf by default',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' },
      ['otlp-proto'],
    ],
    [
      'a traces endpoint with JSON',
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
      ['otlp-json'],
    ],
    [
      'the traces protocol wins over the general one',
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      },
      ['otlp-proto'],
    ],
    ['an exporter named without an endpoint', { OTEL_TRACES_EXPORTER: 'otlp' }, ['otlp-proto']],
    ['two exporters', { OTEL_TRACES_EXPORTER: ' console , otlp ' }, ['console', 'otlp-proto']],
    [
      'none, whatever the endpoint',
      { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' },
      [],
    ],
    ['the SDK disabled', { OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }, []],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, []],
  ])('%s', (_, env, exporters) => {
    expect(tracingChoice(env)).toEqual({ exporters, ignored: [] });
  });

  it('says what it cannot follow: gRPC, exporters it does not have', () => {
    expect(
      tracingChoice({ OTEL_TRACES_EXPORTER: 'zipkin,otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toEqual({
      exporters: [],
      ignored: [
        'trace exporter "zipkin" is not supported: use otlp, console or none',
        'OTLP protocol "grpc" is not supported: use http/protobuf or http/json',
      ],
    });
  });
});
