import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectFolder, shellRecipe } from '../support/project.js';
import { cli, eventually, serve } from '../support/server.js';

// Issue #26 item 3, Done when: `ursa serve` as a real process exports its spans by OTLP/HTTP to
// the endpoint of the standard variables; here a tiny receiver of the test, JSON encoded.

/** One span as OTLP/JSON carries it, with its attributes made a plain object. */
interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly attributes: Record<string, unknown>;
  readonly service: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;
interface OtlpBody {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: {
      spans?: { name: string; traceId: string; spanId: string; attributes?: OtlpAttributes }[];
    }[];
  }[];
}

const plain = (attributes: OtlpAttributes): Record<string, unknown> =>
  Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue === undefined ? value.boolValue : Number(value.intValue)),
    ]),
  );

/** An OTLP/HTTP receiver on 127.0.0.1: what was posted to `/v1/traces`, and the paths asked. */
async function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      paths.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
      for (const resource of (JSON.parse(body) as OtlpBody).resourceSpans ?? []) {
        const service = plain(resource.resource?.attributes)['service.name'];
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({ ...span, attributes: plain(span.attributes), service });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return { server, spans, paths, endpoint: `http://127.0.0.1:${address.port}` };
}

let receiver: HttpServer | undefined;
afterEach(async () => {
  receiver?.closeAllConnections();
  await new Promise<void>((done) => (receiver === undefined ? done() : receiver.close(() => done())));
  receiver = undefined;
});

describe('ursa serve exports traces by OTLP (issue #26 item 3)', () => {
  it("sends the spans of a run and of REST requests to OTEL_EXPORTER_OTLP_ENDPOINT; the run's process got its traceparent", {
    timeout: 30_000,
  }, async () => {
    const otlp = await otlpReceiver();
    receiver = otlp.server;
    const cwd = projectFolder({
      '_vance/recipes/trace.yaml': shellRecipe('printf %s "$TRACEPARENT" > "$URSA_PARAM_OUT"'),
    });
    const written = join(cwd, 'traceparent.txt');
    mkdirSync(join(cwd, '_vance/scheduler'));
    writeFileSync(
      join(cwd, '_vance/scheduler/traced.yaml'),
      `description: e2e\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: trace\nparams:\n  out: ${JSON.stringify(written)}\n`,
    );
    const db = join(cwd, 'ursa.db');
    const scope = ['--tenant', 'acme', '--project', 'ops'];
    expect((await cli(['apply', '.', '--db', db, ...scope], cwd)).code).toBe(0);
    const server = await serve(cwd, db, {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'ursa-e2e',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
    try {
      const token = /admin token for all tenants .*: (ursa_[A-Za-z0-9_-]{43})$/m.exec(
        server.output().stderr,
      )?.[1];
      if (token === undefined) throw new Error('no admin token printed');
      const remote = ['--url', server.url, '--token', token, ...scope];
      const fire = await cli(['fire', 'traced', '--json', ...remote], cwd);
      expect([fire.code, fire.stderr]).toEqual([0, '']);
      const { correlationId } = JSON.parse(fire.stdout) as { correlationId: string };

      const run = await eventually(
        () =>
          otlp.spans.find(
            (s) => s.name === 'ursa.run' && s.attributes['ursa.run.correlation_id'] === correlationId,
          ),
        'the run span at the receiver',
        15_000,
      );
      expect(run.service).toBe('ursa-e2e');
      expect(run.attributes).toMatchObject({
        'ursa.tenant': 'acme',
        'ursa.project': 'ops',
        'ursa.scheduler': 'traced',
        'ursa.run.trigger': 'manual',
        'ursa.run.outcome': 'completed',
        'ursa.run.attempt': 1,
      });
      // The shell process was handed the span its end recorded.
      expect(existsSync(written)).toBe(true);
      expect(readFileSync(written, 'utf8')).toBe(`00-${run.traceId}-${run.spanId}-01`);

      const fired = await eventually(
        () => otlp.spans.find((s) => s.name === 'POST /brain/:tenant/project/:project/scheduler/:name/fire'),
        'the span of the fire request',
        15_000,
      );
      expect(fired.attributes).toEqual({
        'http.request.method': 'POST',
        'http.route': '/brain/:tenant/project/:project/scheduler/:name/fire',
        'http.response.status_code': 202,
      });
      expect(JSON.stringify(otlp.spans)).not.toContain(token);
      expect(otlp.paths.every((p) => p === 'POST /v1/traces application/json')).toBe(true);

      server.child.kill('SIGTERM');
      expect(await server.exit).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});
