import { describe, expect, it } from 'vitest';
import { BATCH_STARTS_IN_FLIGHT, StartQueue } from '../../src/runtime/start-queue.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

// Issue #24: the batches of a top of the hour claimed ahead start a few at a time (each holds a
// lock per scheduler), and the ends of runs wait while starts wait for their turn.
describe("a worker's batch starts (issue #24)", () => {
  it('runs at most two at once, in the order they came', async () => {
    const queue = new StartQueue();
    const running: number[] = [];
    const gates = new Map<number, () => void>();
    const done = [1, 2, 3, 4].map((n) =>
      queue.run(async () => {
        running.push(n);
        await new Promise<void>((resolve) => gates.set(n, resolve));
        running.splice(running.indexOf(n), 1);
        return n * 10;
      }),
    );
    await turn();
    expect(BATCH_STARTS_IN_FLIGHT).toBe(2);
    expect(running).toEqual([1, 2]);
    gates.get(2)?.();
    await turn();
    expect(running).toEqual([1, 3]);
    for (const n of [1, 3]) gates.get(n)?.();
    await turn();
    gates.get(4)?.();
    expect(await Promise.all(done)).toEqual([10, 20, 30, 40]);
  });

  it('holds what clears it back while starts wait for their turn, and not longer', async () => {
    const queue = new StartQueue();
    await queue.clear(); // none waits: at once
    const gates: (() => void)[] = [];
    const done = [1, 2, 3].map(() => queue.run(() => new Promise<void>((resolve) => gates.push(resolve))));
    let cleared = false;
    const clearing = queue.clear().then(() => {
      cleared = true;
    });
    await turn();
    expect(cleared).toBe(false);
    gates[0]?.(); // the third takes its turn: none waits any more, though two still run
    await turn();
    await turn();
    expect(cleared).toBe(true);
    await clearing;
    for (const gate of gates) gate();
    await Promise.all(done);
  });

  it('passes a failed start on to its caller and goes on with the next', async () => {
    const queue = new StartQueue();
    await expect(queue.run(() => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    expect(await queue.run(async () => 'next')).toBe('next');
    await queue.clear();
  });
});
