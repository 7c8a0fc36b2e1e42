import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineCalls } from '../../src/fencing/engine-calls.js';
import { LeaseGate } from '../../src/fencing/lease-gate.js';
import { RunningGroups } from '../../src/fencing/running-groups.js';
import { SelfFence } from '../../src/fencing/self-fence.js';
import { LeaseWatchdog } from '../../src/fencing/watchdog.js';
import { createLogger } from '../../src/log.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5 fencing): the lease watchdog thread ends a worker's process groups when
// no renewal succeeded in time, and only then.

const CHILD = resolve(import.meta.dirname, 'watchdog-child.mjs');
const FENCE_AFTER_MS = 300;
const GRACE_MS = 200;
const children = new Set<ChildProcess>();
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const child of children) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
  children.clear();
});

/** A process group of its own running `script` (`sh -c`), as the shell engine starts one. */
function group(script: string): {
  child: ChildProcess;
  exited: Promise<{ signal: string | null; at: bigint }>;
} {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  children.add(child);
  const exited = once(child, 'exit').then(([, signal]) => ({
    signal: signal as string | null,
    at: process.hrtime.bigint(),
  }));
  return { child, exited };
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
const ms = (ns: bigint) => Number(ns / 1_000_000n);

describe('the lease watchdog thread (issue #20)', () => {
  it('ends no process group while renewals succeed, and every group at the deadline: SIGTERM, then SIGKILL after the grace', async () => {
    const groups = new RunningGroups();
    const watchdog = new LeaseWatchdog(groups, {
      fenceAfterMs: FENCE_AFTER_MS,
      graceMs: GRACE_MS,
      workerId: 'wrk_test',
      log: createLogger('silent'),
    });
    stops.push(() => watchdog.stop());
    const polite = group('sleep 30');
    // Ignores SIGTERM (and so do the sleeps it starts): only the SIGKILL ends it.
    const stubborn = group('trap "" TERM; while :; do sleep 0.05; done');
    watchdog.start(process.hrtime.bigint());
    groups.add({ processId: 'proc_polite', pgid: polite.child.pid as number });
    groups.add({ processId: 'proc_stubborn', pgid: stubborn.child.pid as number });

    // Renewed every 50 ms for four times the fence delay: nothing is ended.
    const began = process.hrtime.bigint();
    let last = began;
    const renewing = setInterval(() => {
      last = process.hrtime.bigint();
      watchdog.renewed(last);
    }, 50);
    await until(() => ms(process.hrtime.bigint() - began) >= 4 * FENCE_AFTER_MS, 'four fence delays');
    clearInterval(renewing);
    expect([running(polite.child), running(stubborn.child), watchdog.fenced]).toEqual([true, true, false]);

    // No renewal any more: at the deadline both groups get SIGTERM, the stubborn one SIGKILL later.
    const [gentle, forced] = await Promise.all([polite.exited, stubborn.exited]);
    expect([gentle.signal, forced.signal]).toEqual(['SIGTERM', 'SIGKILL']);
    expect(ms(gentle.at - last)).toBeGreaterThanOrEqual(FENCE_AFTER_MS);
    expect(ms(forced.at - last)).toBeGreaterThanOrEqual(FENCE_AFTER_MS + GRACE_MS);
    expect(watchdog.fenced).toBe(true);

    // A renewal that succeeds afterwards lifts the fence.
    watchdog.renewed(process.hrtime.bigint());
    await until(() => !watchdog.fenced, 'the fence lifted');
  });

  it('does not signal a group whose run has ended (it may no longer be this worker’s child)', async () => {
    const groups = new RunningGroups();
    const watchdog = new LeaseWatchdog(groups, {
      fenceAfterMs: FENCE_AFTER_MS,
      graceMs: GRACE_MS,
      workerId: 'wrk_test',
      log: createLogger('silent'),
    });
    stops.push(() => watchdog.stop());
    const kept = group('sleep 30');
    const forgotten = group('sleep 30');
    watchdog.start(process.hrtime.bigint());
    groups.add({ processId: 'proc_kept', pgid: kept.child.pid as number });
    groups.add({ processId: 'proc_forgotten', pgid: forgotten.child.pid as number });
    groups.remove('proc_forgotten');
    expect((await kept.exited).signal).toBe('SIGTERM');
    await until(() => watchdog.fenced, 'the fence');
    expect(running(forgotten.child)).toBe(true);
  });

  it('ends the worker process when its event loop is blocked with requests in flight, and only then; it never keeps a process alive', {
    timeout: 30_000,
  }, async () => {
    const run = async (mode: string) => {
      const child = spawn(
        process.execPath,
        [CHILD, JSON.stringify({ mode, fenceAfterMs: FENCE_AFTER_MS, graceMs: GRACE_MS })],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.add(child);
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      const [code, signal] = await once(child, 'exit');
      return { code, signal, out };
    };
    // Blocked for 2 s with a request in flight: killed at the deadline and the grace.
    expect(await run('blocked-requests')).toEqual({ code: null, signal: 'SIGKILL', out: 'blocking\n' });
    // The main thread had fenced itself (it aborted its requests): the process lives on.
    expect(await run('blocked-fenced')).toEqual({ code: 0, signal: null, out: 'blocking\nsurvived\n' });
    // A process whose work is done ends, though the watchdog was never stopped.
    expect(await run('idle')).toEqual({ code: 0, signal: null, out: 'idle\n' });
  });
});

describe('the main thread’s self-fence (issue #20)', () => {
  it('closes the lease gate and stops the runs at the deadline when renewals fail, and opens it at the next renewal', async () => {
    const gate = new LeaseGate();
    let stopped = 0;
    const graces: number[] = [];
    // A lease of 800 ms with a grace of 100 ms: fenced 200 ms after the last renewal sent.
    const fence = new SelfFence(gate, new EngineCalls(new RunningGroups()), {
      leaseTtlMs: 800,
      graceMs: 100,
      workerId: 'wrk_test',
      log: createLogger('silent'),
      stopRuns: (graceMs) => {
        stopped++;
        graces.push(graceMs);
      },
    });
    stops.push(() => fence.stop());
    expect(gate.held).toBe(true);
    const sent = SelfFence.now();
    fence.renewed(sent);
    fence.arm();
    expect(gate.held).toBe(true);
    await until(() => stopped === 1, 'the fence');
    expect(ms(SelfFence.now() - sent)).toBeGreaterThanOrEqual(200);
    expect([gate.held, gate.fenced]).toEqual([false, true]);
    // The runs are stopped with the fence's own grace between SIGTERM and SIGKILL.
    expect(graces).toEqual([100]);

    fence.renewed(SelfFence.now());
    expect([gate.held, gate.fenced, stopped]).toEqual([true, false, 1]);
  });
});
