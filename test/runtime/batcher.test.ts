import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/runtime/batcher.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

// Issue #24: ends written behind by a worker group into fewer, larger transactions under load:
// at most two flushes at once, and what is added meanwhile waits for the next (group commit).
describe('the write-behind batcher (issue #24)', () => {
  it('runs at most two flushes at once; items added meanwhile go together into the next', async () => {
    const flushes: number[][] = [];
    const gates: (() => void)[] = [];
    const batcher = new Batcher<number, number>(async (items) => {
      flushes.push([...items]);
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((i) => i * 10);
    }, 3);
    const results = [1, 2, 3, 4].map((i) => batcher.add(i));
    await turn();
    // One turn's items, split by the maximum of 3 into two flushes, both running.
    expect(flushes).toEqual([[1, 2, 3], [4]]);
    const later = [5, 6, 7, 8].map((i) => batcher.add(i));
    await turn();
    expect(flushes).toHaveLength(2);
    gates[0]?.();
    await Promise.all(results.slice(0, 3));
    await turn();
    expect(flushes).toEqual([[1, 2, 3], [4], [5, 6, 7]]);
    gates[1]?.();
    gates[2]?.();
    await Promise.all(results);
    await turn();
    expect(flushes[3]).toEqual([8]);
    gates[3]?.();
    expect(await Promise.all([...results, ...later])).toEqual([10, 20, 30, 40, 50, 60, 70, 80]);
  });

  it('leaves a turn of the event loop to other tasks between flushes that finish at once', async () => {
    // A SQLite flush finishes without giving up the loop: back to back, they kept timers (the
    // lease's renewal) waiting, and a worker fenced itself at a top of the hour (issue #24).
    const order: string[] = [];
    const batcher = new Batcher<number, number>(async (items) => {
      order.push(`flush ${items.join()}`);
      return items;
    }, 1);
    const all = [1, 2, 3, 4].map((i) => batcher.add(i));
    setImmediate(() => order.push('other task'));
    await Promise.all(all);
    expect(order).toEqual(['flush 1', 'flush 2', 'other task', 'flush 3', 'flush 4']);
  });

  it('rejects every item of a flush that failed, and goes on with the next', async () => {
    let fail = true;
    const batcher = new Batcher<number, number>(async (items) => {
      if (fail) throw new Error('store down');
      return items;
    });
    const failed = [batcher.add(1), batcher.add(2)];
    await expect(Promise.all(failed)).rejects.toThrow('store down');
    await Promise.allSettled(failed);
    fail = false;
    expect(await batcher.add(3)).toBe(3);
  });
});
