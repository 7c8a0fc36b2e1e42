import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5 fencing): the fence keeps its deadlines on the monotonic clock, which
// stands still while the host is suspended. A worker whose host slept past its lease and the
// takeover margin may have had its runs taken over; its first try to renew after it wakes stops
// them (reason lease-lost), whether or not the store answers, and another worker retired it yet.

const T = 'acme';
const P = 'ops';
// `start <pid>`, and `term <pid>` when SIGTERM reaches it; it would run 30 s.
const SCRIPT = [
  `trap 'echo "term $$" >> "$URSA_PARAM_OUT"; exit 143' TERM`,
  'echo "start $$" >> "$URSA_PARAM_OUT"',
  'sleep 30 & wait $!',
].join('\n');

let t: TestRuntime | undefined;
let worker: Worker | undefined;
let dir: string | undefined;
afterEach(async () => {
  await worker?.stop();
  for (const [, pid] of marks())
    try {
      process.kill(-Number(pid), 'SIGKILL');
    } catch {
      // Gone already.
    }
  await t?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  t = worker = dir = undefined;
});

function marks(): string[][] {
  const file = dir === undefined ? '' : join(dir, 'marks');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' '))
    : [];
}

describe.each(DIALECTS)('a worker whose host slept past its lease (on %s; issue #20)', (dialect) => {
  it('stops the runs it held when it next tries to renew its lease after it wakes', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    dir = mkdtempSync(join(tmpdir(), 'ursa-suspend-'));
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/long.yaml': shellRecipe(SCRIPT, { out: join(dir, 'marks') }),
        '_vance/scheduler/long.yaml': cronScheduler('*/10 * * * * *', 'long'),
      }),
      T,
      P,
      libraryActor('alice'),
    );
    let boot = 1_000_000;
    worker = t.worker({ acquireAheadMs: 0, maxSleepMs: 20, bootClock: () => boot });
    await worker.start();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await until(() => marks().some(([kind]) => kind === 'start'), 'the run started');
    expect(marks().map(([kind]) => kind)).toEqual(['start']);

    // The host slept 10 s (more than the 5 s lease and the 2 s margin); its monotonic clock did not.
    boot += 10_000;
    await until(() => marks().some(([kind]) => kind === 'term'), 'the run stopped');
    const rt = t.rt;
    await until(
      async () => (await rt.repos.runs.listForScheduler(T, P, 'long', 10))[0]?.state === 'ended',
      'the run ended',
    );
    const [run] = await rt.repos.runs.listForScheduler(T, P, 'long', 10);
    expect(run).toMatchObject({ outcome: 'cancelled', reason: 'lease-lost' });
  });
});
