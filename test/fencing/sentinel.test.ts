import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunningGroups } from '../../src/fencing/running-groups.js';
import { Sentinel, sentinelEntry } from '../../src/fencing/sentinel.js';
import {
  decodeGroup,
  decodeMessage,
  encodeGroup,
  encodeMessage,
  endWatched,
  type WatchedGroup,
  Watchlist,
} from '../../src/fencing/sentinel-list.js';
import { readStat } from '../../src/processes/process-group.js';
import { capturedLog } from '../support/faults.js';
import { testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #20 (No orphans), decisions §5 fencing: the sentinel, a small process each worker starts,
// ends the process groups its worker listed when the worker dies (the pipe from it closes without
// a goodbye), never a group whose leader's start time changed, and nothing after a goodbye. The
// worker processes themselves are in test/faults/sentinel.test.ts.

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A detached `sh -c script` (its own process group, as the shell engine starts a run). */
function group(script: string, ...args: string[]): ChildProcess {
  const child = spawn('sh', ['-c', script, 'sh', ...args], { detached: true, stdio: 'ignore' });
  children.push(child);
  return child;
}

function marksFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ursa-sentinel-'));
  dirs.push(dir);
  return join(dir, 'marks');
}

const marks = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

function alive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

// Marks its start, and its end when it gets SIGTERM (then exits).
const TRAPPING =
  'trap \'echo "end $$" >> "$1"; exit 0\' TERM; echo "start $$" >> "$1"; while :; do sleep 0.05; done';
// Marks its start and ignores SIGTERM.
const STUBBORN = 'trap "" TERM; echo "start $$" >> "$1"; while :; do sleep 0.05; done';

/** A group running `script` with a marks file, once it marked its start; with its identity. */
async function started(script: string): Promise<{ pid: number; file: string; watched: WatchedGroup }> {
  const file = marksFile();
  const child = group(script, file);
  const pid = child.pid as number;
  await until(() => marks(file).length === 1, 'the group started');
  return { pid, file, watched: { pgid: pid, leaderStartTicks: readStat(pid)?.startTicks as number } };
}

/** The sentinel program (built: dist/), as a worker starts it, with a pipe on its standard input. */
function sentinelProcess(graceMs = 300, running: readonly WatchedGroup[] = []): ChildProcess {
  const child = spawn(process.execPath, [sentinelEntry(), String(graceMs), ...running.map(encodeGroup)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: {},
  });
  children.push(child);
  return child;
}

/** The running sentinels that are children of this process. */
function ownSentinels(): number[] {
  return readdirSync('/proc')
    .filter((entry) => {
      const pid = Number(entry);
      if (!Number.isSafeInteger(pid) || !alive(pid)) return false;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return (
          ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('sentinel-main.js')
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('the sentinel’s messages (issue #20)', () => {
  it('encodes and decodes each message; a line that is none is ignored', () => {
    const group = { pgid: 4242, leaderStartTicks: 987654 };
    for (const message of [
      { kind: 'added', group },
      { kind: 'removed', group },
      { kind: 'goodbye' },
    ] as const)
      expect(decodeMessage(encodeMessage(message).slice(0, -1))).toEqual(message);
    for (const line of ['', '+ 1', '+ 1 x', '* 1 2', '+ 1 2 3', 'goodbye', '+ 1.5 2', '+ 1:2'])
      expect(decodeMessage(line)).toBeUndefined();
    expect(decodeGroup(encodeGroup(group))).toEqual(group);
    for (const argument of ['', '1', '1:', '1:x', '1:2:3', '1.5:2'])
      expect(decodeGroup(argument)).toBeUndefined();
  });

  it('lists the groups added and not removed, from chunks cut anywhere', () => {
    const list = new Watchlist();
    const text = ['+ 10 100', '+ 11 110', '- 10 100', '+ 12 120', '+ 12 120', '- 12 120', 'junk', ''].join(
      '\n',
    );
    for (let i = 0; i < text.length; i += 3) list.read(text.slice(i, i + 3));
    expect(list.groups).toEqual([
      { pgid: 11, leaderStartTicks: 110 },
      { pgid: 12, leaderStartTicks: 120 },
    ]);
    expect(list.goodbye).toBe(false);
    list.read('- 12 120\n- 11 110\nby');
    expect(list.groups).toEqual([]);
    expect(list.goodbye).toBe(false);
    list.read('e\n');
    expect(list.goodbye).toBe(true);
  });
});

describe('endWatched: what the sentinel does when its worker died (issue #20)', () => {
  it('ends a listed group (SIGTERM first: its trap runs)', async () => {
    const { pid, file, watched } = await started(TRAPPING);
    expect(await endWatched([watched], 300)).toEqual(new Map([[pid, 'ended']]));
    expect(marks(file)).toEqual([`start ${pid}`, `end ${pid}`]);
    expect(alive(pid)).toBe(false);
  });

  it('never signals a group whose leader’s start time differs from the one it was told', async () => {
    const { pid, file, watched } = await started(TRAPPING);
    const other = { ...watched, leaderStartTicks: watched.leaderStartTicks + 1 };
    expect(await endWatched([other], 300)).toEqual(new Map([[pid, 'reused']]));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(marks(file)).toEqual([`start ${pid}`]);
    expect(alive(pid)).toBe(true);
  });
});

describe('the sentinel process (issue #20)', () => {
  it('its worker’s pipe closed without a goodbye: it ends the listed groups, SIGKILL after the grace, and exits', async () => {
    const trapping = await started(TRAPPING);
    const stubborn = await started(STUBBORN);
    const sentinel = sentinelProcess(300);
    const exited = once(sentinel, 'exit');
    sentinel.stdin?.write(encodeMessage({ kind: 'added', group: trapping.watched }));
    sentinel.stdin?.write(encodeMessage({ kind: 'added', group: stubborn.watched }));
    const closedAt = performance.now();
    sentinel.stdin?.end();
    expect(await exited).toEqual([0, null]);
    expect(performance.now() - closedAt).toBeGreaterThanOrEqual(300);
    expect(marks(trapping.file)).toEqual([`start ${trapping.pid}`, `end ${trapping.pid}`]);
    expect([alive(trapping.pid), alive(stubborn.pid)]).toEqual([false, false]);
  });

  it('knows the groups on its command line from its start: its worker’s pipe closed at once, it ends them', async () => {
    const { pid, file, watched } = await started(TRAPPING);
    const sentinel = sentinelProcess(300, [watched]);
    const exited = once(sentinel, 'exit');
    sentinel.stdin?.end();
    expect(await exited).toEqual([0, null]);
    expect(marks(file)).toEqual([`start ${pid}`, `end ${pid}`]);
  });

  it('never signals a group told with another leader start time', async () => {
    const { pid, file, watched } = await started(TRAPPING);
    const sentinel = sentinelProcess();
    const exited = once(sentinel, 'exit');
    sentinel.stdin?.end(encodeMessage({ kind: 'added', group: { ...watched, leaderStartTicks: 1 } }));
    expect(await exited).toEqual([0, null]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(marks(file)).toEqual([`start ${pid}`]);
    expect(alive(pid)).toBe(true);
  });

  it('after a goodbye it exits and signals nothing, even a group still listed', async () => {
    const { pid, file, watched } = await started(TRAPPING);
    const sentinel = sentinelProcess();
    const exited = once(sentinel, 'exit');
    sentinel.stdin?.write(encodeMessage({ kind: 'added', group: watched }));
    sentinel.stdin?.write(encodeMessage({ kind: 'goodbye' }));
    expect(await exited).toEqual([0, null]);
    sentinel.stdin?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(marks(file)).toEqual([`start ${pid}`]);
    expect(alive(pid)).toBe(true);
  });

  it('a group removed is not ended', async () => {
    const { pid, file, watched } = await started(TRAPPING);
    const sentinel = sentinelProcess();
    const exited = once(sentinel, 'exit');
    sentinel.stdin?.write(encodeMessage({ kind: 'added', group: watched }));
    sentinel.stdin?.end(encodeMessage({ kind: 'removed', group: watched }));
    expect(await exited).toEqual([0, null]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(marks(file)).toEqual([`start ${pid}`]);
  });
});

describe('the worker’s side (issue #20)', () => {
  it('a sentinel that dies is started again at once (logged at warn) with the running groups on its command line; a stop ends it and signals nothing', async () => {
    const { pid, file, watched } = await started(TRAPPING);
    const { log, lines } = capturedLog('warn');
    const groups = new RunningGroups();
    const sentinel = new Sentinel(groups, { graceMs: 300, workerId: 'wrk_test', log });
    sentinel.start();
    const first = sentinel.pid as number;
    expect(ownSentinels()).toContain(first);
    groups.add({ processId: 'proc_a', pgid: pid });
    process.kill(first, 'SIGKILL');
    await until(() => sentinel.pid !== undefined && sentinel.pid !== first, 'a new sentinel');
    const second = sentinel.pid as number;
    expect(readFileSync(`/proc/${second}/cmdline`, 'utf8').split('\0')).toContain(encodeGroup(watched));
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        worker: 'wrk_test',
        pid: first,
        signal: 'SIGKILL',
        restartInMs: 0,
      }),
    ]);
    await sentinel.stop();
    expect(alive(second)).toBe(false);
    expect(lines).toHaveLength(1);
    expect(marks(file)).toEqual([`start ${pid}`]);
    expect(alive(pid)).toBe(true);
  });

  it('an in-process worker started (as by createUrsa) has a sentinel, built from dist/, gone after its clean stop', async () => {
    const t = await testRuntime('2026-06-01T08:00:00Z');
    try {
      const before = new Set(ownSentinels());
      const worker = t.worker();
      await worker.start();
      const mine = ownSentinels().filter((pid) => !before.has(pid));
      expect(mine).toHaveLength(1);
      await worker.stop();
      expect(alive(mine[0] as number)).toBe(false);
    } finally {
      await t.close();
    }
  });
});
