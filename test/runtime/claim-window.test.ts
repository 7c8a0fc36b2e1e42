import { afterEach, describe, expect, it } from 'vitest';
import { ASSUMED_CLAIM_MS } from '../../src/decisions/claim-window.js';
import type { TickResult } from '../../src/runtime/ticker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// Issue #24: a top of the hour is claimed before its instant, so that only its starts are left
// for it: the fire-ahead window grows with what is due within the longest window.
const T = 'acme';
const P = 'ops';
const COUNT = 1_500;
const INSTANT = Date.parse('2026-06-01T08:00:00Z');
const IDLE: TickResult = { due: 0, claimed: 0, coalesced: 0, fired: 0, skipped: 0 };

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function schedulers(rt: TestRuntime['rt']): Promise<void> {
  const files: Record<string, string> = { '_vance/recipes/noop.yaml': 'description: n\nengine: noop\n' };
  for (let i = 0; i < COUNT; i++) files[`_vance/scheduler/s${i}.yaml`] = cronScheduler('0 0 8 * * *', 'noop');
  await applyDirectory(rt, projectFolder(files), T, P, libraryActor('alice'));
}

describe.each(DIALECTS)(
  'the fire-ahead window before many occurrences at one instant, on %s (issue #24)',
  (dialect) => {
    it('wakes as long before the instant as claiming them takes, and claims them all before it', async () => {
      t = await testRuntime('2026-06-01T07:59:30Z', { dialect });
      await schedulers(t.rt);
      const worker = t.worker();
      await worker.bootstrap();
      // 1,500 claims at the assumed 0.1 ms, half again: 225 ms before the configured 500.
      const window = 500 + Math.ceil(COUNT * ASSUMED_CLAIM_MS * 1.5);
      expect(await worker.ticker.wakeAt(IDLE, 500)).toBe(INSTANT - window);
      expect(worker.ticker.aheadMs(500)).toBe(window);

      t.clock.set(INSTANT - window);
      let claimed = 0;
      for (;;) {
        const tick = await worker.tick(worker.ticker.aheadMs(500));
        if (tick.due === 0) break;
        claimed += tick.claimed;
      }
      expect(claimed).toBe(COUNT);
      const runs = await t.rt.repos.runs.listForScheduler(T, P, 's0', 10);
      expect(runs.map((r) => [r.state, r.scheduledFor, r.claimedAt])).toEqual([
        ['claimed', INSTANT, INSTANT - window],
      ]);
      // At the instant they start, as every run claimed ahead does.
      t.clock.set(INSTANT);
      await worker.executor.settled();
      expect((await t.rt.repos.runs.listForScheduler(T, P, 's0', 10)).map((r) => r.startedAt)).toEqual([
        INSTANT,
      ]);
      await worker.stop();
    });

    it('is never widened from 0: claims at the instant stay at the instant', async () => {
      t = await testRuntime('2026-06-01T07:59:30Z', { dialect });
      await schedulers(t.rt);
      const worker = t.worker();
      await worker.bootstrap();
      expect(await worker.ticker.wakeAt(IDLE, 0)).toBe(INSTANT);
      expect(worker.ticker.aheadMs(0)).toBe(0);
      await worker.stop();
    });
  },
);
