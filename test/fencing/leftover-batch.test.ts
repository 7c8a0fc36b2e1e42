import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { endLeftoverGroups } from '../../src/fencing/leftovers.js';
import { identifyGroup, readStat } from '../../src/processes/process-group.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Counts the scans of `/proc` (a `readdirSync('/proc')` each) made by the code under test.
const proc = vi.hoisted(() => ({ scans: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const readdirSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (path === '/proc') proc.scans++;
    return (real.readdirSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.readdirSync;
  return { ...real, readdirSync, default: { ...real, readdirSync } };
});

const GROUPS = 30;
const GRACE_MS = 500;
const SLOW = { timeout: 60_000 };

let t: TestRuntime | undefined;
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  await t?.close();
  t = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function running(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

// Issue #20 (No orphans): a reap ended each leftover group on its own, each polling its own scan
// of /proc on the event loop that renews the worker's lease. Dozens of leftovers end together:
// one scan a poll round for all of them, one shared grace.
describe.each(DIALECTS)('many leftover groups on %s (issue #20)', (dialect) => {
  it(
    `ends ${GROUPS} groups that ignore SIGTERM in about one grace, with fewer scans of /proc than groups`,
    SLOW,
    async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      const dir = mkdtempSync(join(tmpdir(), 'ursa-batch-'));
      dirs.push(dir);
      const pids: number[] = [];
      for (let i = 0; i < GROUPS; i++) {
        const child = spawn(
          'sh',
          ['-c', 'trap "" TERM; touch "$1"; while :; do sleep 1; done', 'sh', join(dir, `${i}`)],
          {
            detached: true,
            stdio: 'ignore',
          },
        );
        children.push(child);
        pids.push(child.pid as number);
      }
      await until(() => fs.readdirSync(dir).length === GROUPS, 'every group started');
      await t.rt.repos.processGroups.record(
        pids.map((pid) => ({
          ...identifyGroup(pid),
          processId: `proc_leftover_${pid}`,
          workerId: 'wrk_gone',
          recordedAt: (t as TestRuntime).clock.now(),
        })),
      );
      const rt = t.rt;
      proc.scans = 0;
      const began = performance.now();
      const result = await endLeftoverGroups(
        rt,
        { kind: 'only', workerId: 'wrk_me' },
        {},
        { graceMs: GRACE_MS },
      );
      const tookMs = performance.now() - began;

      expect(result).toEqual({ ended: GROUPS, gone: 0, unverified: 0 });
      for (const pid of pids) expect(running(pid)).toBe(false);
      // One grace shared by all (a bound against ending them one after another, not a speed check).
      expect(tookMs).toBeLessThan(10 * GRACE_MS);
      // A poll round scans /proc once for every group: about ten rounds in the grace and the
      // SIGKILL's wait, where a scan a group and round would be hundreds.
      expect(proc.scans).toBeLessThan(GROUPS);
    },
  );
});
