import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const P = 'ops';

let t: TestRuntime;
afterEach(async () => {
  vi.restoreAllMocks();
  await t.close();
});

/** A `noop` scheduler every 10 s, a worker bootstrapped on it, and the clock at its first occurrence. */
async function firstOccurrence(dialect: (typeof DIALECTS)[number]) {
  t = await testRuntime('2026-06-01T08:00:01Z', { dialect });
  await applyDirectory(
    t.rt,
    projectFolder({ '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'noop') }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = t.worker();
  await worker.bootstrap();
  t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
  return worker;
}

/** The run of the occurrence with its process, feed lines and run log. */
async function recorded() {
  const db = t.store.db;
  const runs = await db.selectFrom('runs').select(['state', 'outcome', 'reason', 'process_id']).execute();
  const processes = await db.selectFrom('processes').select(['id', 'status']).execute();
  const lines = (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 100)).map(
    (l) => `${l.kind} ${l.outcome}`,
  );
  const logs = await db
    .selectFrom('documents')
    .select('body')
    .where('path', 'like', '_vance/logs/%')
    .execute();
  return { runs, processes, lines: lines.sort(), logs };
}

// Issue #12: a store that fails while a run is under way loses nothing of what already happened.
describe.each(DIALECTS)(
  'records that the store failed to take are written when it answers again, on %s (issue #12)',
  (dialect) => {
    it('a run whose end could not be written ends completed once, not worker-lost', async () => {
      const worker = await firstOccurrence(dialect);
      const endMany = vi.spyOn(t.rt.repos.runs, 'endMany');
      endMany
        .mockRejectedValueOnce(new Error('connection terminated'))
        .mockRejectedValueOnce(new Error('disk full'));
      expect(await worker.tick()).toMatchObject({ claimed: 1, fired: 1 });
      await worker.executor.settled();
      expect(endMany).toHaveBeenCalledTimes(3);
      const { runs, processes, lines, logs } = await recorded();
      expect(runs).toEqual([
        { state: 'ended', outcome: 'completed', reason: null, process_id: processes[0]?.id },
      ]);
      expect(processes.map((p) => p.status)).toEqual(['done']);
      expect(lines).toEqual(['END completed', 'START pending']);
      expect(logs).toHaveLength(1);
      expect(logs[0]?.body).toContain('completed');
    });

    it('a batch whose pending run logs could not be written gets its process, START line and run log once', async () => {
      const worker = await firstOccurrence(dialect);
      const createMissing = vi.spyOn(t.rt.repos.documents, 'createMissing');
      createMissing
        .mockRejectedValueOnce(new Error('connection terminated'))
        .mockRejectedValueOnce(new Error('disk full'));
      expect(await worker.tick()).toMatchObject({ claimed: 1, fired: 1 });
      await worker.executor.settled();
      expect(createMissing).toHaveBeenCalledTimes(3);
      const { runs, processes, lines, logs } = await recorded();
      expect(runs.map((r) => `${r.state} ${r.outcome}`)).toEqual(['ended completed']);
      expect(processes.map((p) => p.status)).toEqual(['done']);
      expect(lines).toEqual(['END completed', 'START pending']);
      expect(logs).toHaveLength(1);
    });
  },
);
