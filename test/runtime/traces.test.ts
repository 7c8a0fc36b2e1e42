import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sdkTracing, type Tracing } from '../../src/app/otel-sdk.js';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import { runTraceIds, traceparentOf } from '../../src/runs/trace.js';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import type { Run } from '../../src/store/runs.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #26 item 3: a span per run from its claim to its end, recorded by whichever process ends
// the run, from the run as the store holds it; spans for ticks; the run's traceparent handed to
// its engine. Asserted from the SDK's in-memory exporter, on both stores.

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
const DEAD_AFTER = TTL + TAKEOVER_MARGIN_MS;

let t: TestRuntime | undefined;
const tracings: Tracing[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const tracing of tracings.splice(0)) await tracing.shutdown();
  await t?.close();
  t = undefined;
});

/** A runtime like `rt` whose spans go to an in-memory exporter, as `ursa serve` with OTLP does. */
function traced(rt: Runtime): { rt: Runtime; spans: (name?: string) => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const tracing = sdkTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  tracings.push(tracing);
  return {
    rt: { ...rt, tracer: tracing.tracer },
    spans: (name) => exporter.getFinishedSpans().filter((span) => name === undefined || span.name === name),
  };
}

async function setUp(dialect: (typeof DIALECTS)[number]) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const engine = controlledEngine();
  t.rt.engines.register(engine);
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'held'),
    }),
    T,
    P,
    libraryActor('alice'),
  );
  return { t, engine };
}

async function theRun(rt: Runtime): Promise<Run> {
  const [run] = await rt.repos.runs.listForScheduler(T, P, 'job', 10);
  if (run === undefined) throw new Error('no run');
  return run;
}

const ms = (time: ReadableSpan['startTime']) => hrTimeToMilliseconds(time);

describe.each(DIALECTS)('traces of runs and ticks on %s (issue #26 item 3)', (dialect) => {
  it('a coalesced run has one span from its claim to its end with its scheduler, occurrence, outcome, lateness, coalesced count, worker and attempt; its engine gets its traceparent', async () => {
    const { t, engine } = await setUp(dialect);
    const { rt, spans } = traced(t.rt);
    const worker = t.worker({ leaseTtlMs: TTL }, rt);
    await worker.bootstrap();
    // Four occurrences are due (08:00:10 … 08:00:40): one run serves the first and absorbs three.
    t.clock.set(Date.parse('2026-06-01T08:00:42.500Z'));
    const started = engine.started();
    await worker.tick();
    const held = await started;
    t.clock.advance(1_000);
    held.finish({ status: 'done' });
    await worker.executor.settled();

    const run = await theRun(t.rt);
    expect(run).toMatchObject({ state: 'ended', outcome: 'completed', attempt: 1, coalesced: true });
    expect([iso(run.scheduledFor), iso(run.coalescedUntil as number)]).toEqual([
      '2026-06-01T08:00:10Z',
      '2026-06-01T08:00:40Z',
    ]);
    const [span, ...more] = spans('ursa.run');
    expect(more).toEqual([]);
    if (span === undefined) throw new Error('no run span');
    expect(span.attributes).toEqual({
      'ursa.tenant': T,
      'ursa.project': P,
      'ursa.scheduler': 'job',
      'ursa.run.correlation_id': run.correlationId,
      'ursa.run.occurrence': '2026-06-01T08:00:10Z',
      'ursa.run.trigger': 'cron',
      'ursa.run.outcome': 'completed',
      'ursa.run.attempt': 1,
      'ursa.run.coalesced': true,
      'ursa.run.coalesced_count': 3,
      'ursa.run.coalesced_until': '2026-06-01T08:00:40Z',
      'ursa.run.lateness_ms': 32_500,
      'ursa.worker.id': worker.id,
    });
    // The instants are the store's: claim, start, end.
    expect(ms(span.startTime)).toBe(run.claimedAt);
    expect(ms(span.startTime)).toBe(Date.parse('2026-06-01T08:00:42.500Z'));
    expect(ms(span.endTime)).toBe(run.endedAt);
    expect(ms(span.endTime)).toBe(Date.parse('2026-06-01T08:00:43.500Z'));
    expect(span.events.map((e) => [e.name, ms(e.time)])).toEqual([['started', run.startedAt]]);
    expect(span.status.code).toBe(0);
    // The engine was told the span that its end recorded.
    const { traceId, spanId } = span.spanContext();
    expect(held.request.context.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    expect(span.parentSpanContext).toBeUndefined();

    const [tick] = spans('ursa.tick');
    expect(tick?.attributes).toEqual({
      'ursa.worker.id': worker.id,
      'ursa.tick.due': 1,
      'ursa.tick.claimed': 1,
      'ursa.tick.coalesced': 1,
      'ursa.tick.fired': 1,
      'ursa.tick.skipped': 0,
    });
    expect(ms(tick?.startTime ?? [0, 0])).toBe(Date.parse('2026-06-01T08:00:42.500Z'));
  });

  it('a run whose worker was lost has its span, recorded by the worker that ended it, from its own claim', async () => {
    const { t, engine } = await setUp(dialect);
    const a = traced(t.rt);
    const b = traced(await t.peer());
    const workerA = t.worker({ leaseTtlMs: TTL }, a.rt);
    const workerB = t.worker({ leaseTtlMs: TTL }, b.rt);
    await workerA.bootstrap();
    await workerB.bootstrap();
    const first = Date.parse('2026-06-01T08:00:10Z');
    t.clock.set(first);
    await workerA.heartbeat();
    const started = engine.started();
    await workerA.tick();
    const held = await started;

    // A stalls past its lease; B finds it lost and ends its run.
    t.clock.advance(DEAD_AFTER + 1);
    expect(await workerB.reap()).toEqual({ lost: 1, resumed: 0 });
    // A hears it was retired and stops its process: the run's end is B's, so A records no span.
    await workerA.heartbeat();
    await workerA.executor.settled();
    expect(await held.stopped).toBeTypeOf('string');

    const run = await theRun(t.rt);
    expect(run).toMatchObject({ state: 'ended', outcome: 'failed', reason: 'worker-lost' });
    expect(a.spans('ursa.run')).toEqual([]);
    const [span, ...more] = b.spans('ursa.run');
    expect(more).toEqual([]);
    if (span === undefined) throw new Error('no run span');
    expect(span.attributes).toMatchObject({
      'ursa.scheduler': 'job',
      'ursa.run.correlation_id': run.correlationId,
      'ursa.run.occurrence': '2026-06-01T08:00:10Z',
      'ursa.run.outcome': 'failed',
      'ursa.run.reason': 'worker-lost',
      'ursa.run.lateness_ms': 0,
      'ursa.run.coalesced': false,
      'ursa.run.coalesced_count': 0,
      'ursa.run.attempt': 1,
      // The worker that ran it, not the one that ended it.
      'ursa.worker.id': workerA.id,
    });
    expect(ms(span.startTime)).toBe(first);
    expect(ms(span.endTime)).toBe(first + DEAD_AFTER + 1);
    expect(span.events.map((e) => [e.name, ms(e.time)])).toEqual([['started', first]]);
    expect(span.status).toEqual({ code: 2, message: 'worker-lost' });
    // The same span the run's own engine was told about, though another process recorded it.
    const { traceId, spanId } = span.spanContext();
    expect(held.request.context.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('a run skipped for its overlap has its span, from its claim to its skip, with no start', async () => {
    const { t, engine } = await setUp(dialect);
    const { rt, spans } = traced(t.rt);
    const worker = t.worker({ leaseTtlMs: TTL }, rt);
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    const started = engine.started();
    await worker.tick();
    const held = await started;
    // The next occurrence comes while the first run holds the lane: `skip`, the default policy.
    const second = Date.parse('2026-06-01T08:00:20Z');
    t.clock.set(second);
    await worker.tick();
    await until(() => spans('ursa.run').length > 0, 'the span of the skipped run');
    const skipped = spans('ursa.run');
    expect(
      skipped.map((s) => [s.attributes['ursa.run.occurrence'], s.attributes['ursa.run.outcome']]),
    ).toEqual([['2026-06-01T08:00:20Z', 'skipped_overlap']]);
    const [span] = skipped;
    expect([ms(span?.startTime ?? [0, 0]), ms(span?.endTime ?? [0, 0])]).toEqual([second, second]);
    expect(span?.events).toEqual([]);
    expect(span?.attributes['ursa.run.lateness_ms']).toBeUndefined();
    held.finish();
    await worker.executor.settled();
    expect(spans('ursa.run').map((s) => s.attributes['ursa.run.outcome'])).toEqual([
      'skipped_overlap',
      'completed',
    ]);
  });

  it("the steps of a scheduler's workflow run are handed their run's traceparent", async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const engine = controlledEngine();
    t.rt.engines.register(engine);
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
        '_vance/workflows/w.yaml': 'description: one step\nsteps:\n  - name: only\n    recipe: held\n',
        '_vance/scheduler/job.yaml': 'description: d\ncron: "*/10 * * * * *"\ntimezone: UTC\nworkflow: w\n',
      }),
      T,
      P,
      libraryActor('alice'),
    );
    const { rt, spans } = traced(t.rt);
    const worker = t.worker({ leaseTtlMs: TTL }, rt);
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    const started = engine.started();
    await worker.tick();
    const step = await started;
    step.finish();
    await until(async () => (await theRun(t?.rt as Runtime)).state === 'ended', 'the workflow run ended');
    await worker.executor.settled();
    const run = await theRun(t.rt);
    expect(run).toMatchObject({ outcome: 'completed' });
    expect(step.request.context.traceparent).toBe(traceparentOf(run.correlationId));
    const [span] = spans('ursa.run');
    expect(span?.spanContext()).toMatchObject(runTraceIds(run.correlationId));
  });

  it('a one-shot whose start is refused has the span of its released run (spec §10a)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const at = '2026-06-01T08:30:00Z';
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/custom.yaml': 'description: a library engine\nengine: custom\n',
        '_vance/scheduler/once.yaml': `description: once\nat: "${at}"\nrecipe: custom\n`,
      }),
      T,
      P,
      libraryActor('alice'),
    );
    const { rt, spans } = traced(t.rt);
    const worker = t.worker({}, rt);
    await worker.bootstrap();
    t.clock.set(Date.parse(at));
    await worker.tick();
    await worker.executor.settled();
    const [span, ...more] = spans('ursa.run');
    expect(more).toEqual([]);
    expect(span?.attributes).toMatchObject({
      'ursa.scheduler': 'once',
      'ursa.run.trigger': 'at',
      'ursa.run.occurrence': at,
      'ursa.run.outcome': 'refused',
      'ursa.run.reason': 'engine "custom" is not registered',
      'ursa.worker.id': worker.id,
    });
    expect([ms(span?.startTime ?? [0, 0]), ms(span?.endTime ?? [0, 0])]).toEqual([
      Date.parse(at),
      Date.parse(at),
    ]);
  });

  it("a tick the store fails is an error span in Ursa's words, without the driver's text", async () => {
    const { t } = await setUp(dialect);
    const { rt, spans } = traced(t.rt);
    const worker = t.worker({ leaseTtlMs: TTL }, rt);
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    vi.spyOn(rt.repos.schedules, 'claimDue').mockRejectedValueOnce(
      new Error('connect ECONNREFUSED db.internal:5432 password=hunter2'),
    );
    await expect(worker.tick()).rejects.toThrow('ECONNREFUSED');
    const [tick, ...more] = spans('ursa.tick');
    expect(more).toEqual([]);
    expect(tick?.status).toEqual({ code: 2, message: 'the tick failed' });
    expect(tick?.attributes).toEqual({ 'ursa.worker.id': worker.id });
  });

  it('without a tracer no engine is handed a traceparent', async () => {
    const { t, engine } = await setUp(dialect);
    const worker = t.worker({ leaseTtlMs: TTL });
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    const started = engine.started();
    await worker.tick();
    const held = await started;
    held.finish();
    await worker.executor.settled();
    expect(held.request.context.traceparent).toBeUndefined();
  });
});
