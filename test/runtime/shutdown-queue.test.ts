import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { capturedLog } from '../support/faults.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
const DUE = Date.parse('2026-06-01T08:00:10Z');
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const RECIPE = 'description: held by the test\nengine: held\n';
const SCHEDULER =
  'description: queue test\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: held\noverlap: queue\n';

async function runAt(rt: Runtime, at: number) {
  return (await rt.repos.runs.listForScheduler(T, P, 'job', 20)).find((r) => r.scheduledFor === at);
}

// issue #20, decisions §5: a clean shutdown with a run waiting behind an active one. The active
// run is stopped (outcome cancelled, reason shutdown); the waiting one cannot start on a worker
// that is stopping: it stays queued, says so, and the next worker starts it as routine work — not
// as "the work of lost workers", which is for workers that died.
describe.each(DIALECTS)('a clean shutdown with a queued run, on %s (issue #20)', (dialect) => {
  it('records that the queued run stays queued for the next worker, which resumes it without a lost-worker warning', async () => {
    const tr = await testRuntime('2026-06-01T08:00:00Z', { dialect, settings: { shutdownGraceMs: 50 } });
    t = tr;
    const engine = controlledEngine();
    tr.rt.engines.register(engine);
    const folder = projectFolder({
      '_vance/recipes/held.yaml': RECIPE,
      '_vance/scheduler/job.yaml': SCHEDULER,
    });
    await applyDirectory(tr.rt, folder, T, P, libraryActor('alice'));
    rmSync(folder, { recursive: true, force: true });
    const first = capturedLog('info');
    const worker = tr.worker({}, { ...tr.rt, log: first.log });
    await worker.bootstrap();
    const entered = engine.started();
    tr.clock.set(DUE);
    await worker.tick();
    const active = await entered;
    tr.clock.set(DUE + 10_000);
    await worker.tick();
    await until(async () => (await runAt(tr.rt, DUE + 10_000))?.state === 'queued', 'the second run waits');

    await worker.stop();
    expect(await active.stopped).toBe('shutdown');
    expect(await runAt(tr.rt, DUE)).toMatchObject({ outcome: 'cancelled', reason: 'shutdown' });
    const queued = await runAt(tr.rt, DUE + 10_000);
    // Still queued, held by no worker: what a stopped worker holds is nobody's.
    expect(queued).toMatchObject({ state: 'queued', workerId: null });
    const log = await tr.rt.repos.documents.get({ tenant: T, project: P, path: queued?.logPath as string });
    expect(log?.body).toContain('outcome: pending');
    expect(log?.body).toMatch(
      /NOTE {7}the worker stopped; this run stays queued, and the next worker starts it/,
    );
    expect(
      first.lines
        .filter((l) => l.msg === 'worker stopping: a queued run stays queued for the next worker')
        .map((l) => l.correlationId),
    ).toEqual([queued?.correlationId]);

    // The next start (a new process on the same store) resumes it.
    const rt = await tr.peer();
    const next = controlledEngine();
    rt.engines.register(next);
    const second = capturedLog('info');
    const started = next.started();
    const restarted = tr.worker({ exclusive: dialect === 'sqlite' }, { ...rt, log: second.log });
    await restarted.bootstrap();
    const resumed = await started;
    expect(resumed.request.context.correlationId).toBe(queued?.correlationId);
    resumed.finish();
    await restarted.executor.settled();
    expect(await runAt(rt, DUE + 10_000)).toMatchObject({ state: 'ended', outcome: 'completed' });
    expect(second.lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([]);
    expect(
      second.lines.filter((l) => l.msg === 'queued runs of a stopped worker resumed').map((l) => l.queued),
    ).toEqual([1]);
    // The engines' own record: the first run, stopped; the queued one, once, on the next worker.
    expect(engine.processes).toHaveLength(1);
    expect(next.processes).toHaveLength(1);
  });
});
