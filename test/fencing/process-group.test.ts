import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endGroup } from '../../src/processes/group-ending.js';
import {
  groupAlive,
  groupMembers,
  hostIdentity,
  identifyGroup,
  isOwnGroup,
  parseStat,
  readStat,
  sameHost,
} from '../../src/processes/process-group.js';
import { until } from '../support/until.js';

const OWN_GROUP_CHILD = resolve(import.meta.dirname, 'own-group-child.mjs');

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
  const dir = mkdtempSync(join(tmpdir(), 'ursa-group-'));
  dirs.push(dir);
  return join(dir, 'marks');
}

const marks = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

function alive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

// A script that marks its start, and its end when it gets SIGTERM (then exits).
const TRAPPING =
  'trap \'echo "end $$" >> "$1"; exit 0\' TERM; echo "start $$" >> "$1"; while :; do sleep 0.05; done';

describe('process identity (issue #20, decisions §5 fencing)', () => {
  it('reads the state, process group and start time after the last parenthesis of the command name', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[0] = 'S';
    fields[2] = '4242';
    fields[19] = '987654';
    expect(parseStat(`4242 (a) b (c)) ${fields.join(' ')}\n`)).toEqual({
      state: 'S',
      pgrp: 4242,
      startTicks: 987654,
    });
    expect(parseStat('garbage')).toBeUndefined();
  });

  it('knows this host by its name, boot id and pid namespace', () => {
    expect(hostIdentity()).toEqual({
      host: hostname(),
      bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      pidNamespace: readlinkSync('/proc/self/ns/pid'),
    });
    const here = hostIdentity();
    expect(sameHost(here)).toBe(true);
    expect(sameHost({ ...here, bootId: 'another-boot' })).toBe(false);
    expect(sameHost({ ...here, pidNamespace: 'pid:[1]' })).toBe(false);
    // The host name can change at runtime (DHCP, hostnamectl): the boot and namespace decide.
    expect(sameHost({ ...here, host: 'elsewhere' })).toBe(true);
    expect(sameHost({ ...here, bootId: null })).toBe(false);
  });

  it('records a spawned group: its pgid is the leader pid, with the leader start time', async () => {
    const child = group('exec sleep 30');
    const pid = child.pid as number;
    const identity = identifyGroup(pid);
    expect(identity).toMatchObject({ ...hostIdentity(), pgid: pid });
    expect(identity.leaderStartTicks).toBe(readStat(pid)?.startTicks);
    expect(readStat(pid)?.pgrp).toBe(pid);
    expect(groupMembers(pid)).toEqual([pid]);
    expect(groupAlive(pid)).toBe(true);
  });
});

describe('ending a recorded group (issue #20, decisions §5 fencing)', () => {
  it('ends the whole group, leader and members, with SIGTERM: each runs its TERM trap', async () => {
    const file = marksFile();
    const child = group(`sh -c '${TRAPPING.replaceAll("'", "'\\''")}' sh "$1" & ${TRAPPING}`, file);
    await until(() => marks(file).length === 2, 'both processes started');
    const identity = identifyGroup(child.pid as number);
    expect(await endGroup(identity, { graceMs: 5_000 })).toBe('ended');
    const pids = marks(file)
      .filter((m) => m.startsWith('start'))
      .map((m) => Number(m.split(' ')[1]));
    expect(
      marks(file)
        .filter((m) => m.startsWith('end'))
        .sort(),
    ).toEqual(pids.map((p) => `end ${p}`).sort());
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  it('never signals a pid whose start time differs from the recorded one (a reused pid)', async () => {
    const file = marksFile();
    const child = group(TRAPPING, file);
    await until(() => marks(file).length === 1, 'the process started');
    const pid = child.pid as number;
    const recorded = identifyGroup(pid);
    const reused = { ...recorded, leaderStartTicks: (recorded.leaderStartTicks as number) - 1 };
    expect(await endGroup(reused, { graceMs: 200 })).toBe('reused');
    expect(marks(file)).toEqual([`start ${pid}`]);
    expect(alive(pid)).toBe(true);
  });

  it('with the leader gone, ends the members still in its group', async () => {
    const file = marksFile();
    // The leader starts a trapping member with its output elsewhere, and exits.
    const child = group(`sh -c '${TRAPPING.replaceAll("'", "'\\''")}' sh "$1" >/dev/null 2>&1 &`, file);
    const identity = identifyGroup(child.pid as number);
    await once(child, 'exit');
    await until(() => marks(file).length === 1, 'the member started');
    const member = Number(marks(file)[0]?.split(' ')[1]);
    expect(readStat(member)?.pgrp).toBe(identity.pgid);
    expect(await endGroup(identity, { graceMs: 5_000 })).toBe('ended');
    expect(marks(file)).toEqual([`start ${member}`, `end ${member}`]);
    expect(alive(member)).toBe(false);
  });

  it('sends SIGKILL after the grace to a group that ignores SIGTERM', async () => {
    const file = marksFile();
    const child = group('trap "" TERM; echo "start $$" >> "$1"; while :; do sleep 0.05; done', file);
    await until(() => marks(file).length === 1, 'the process started');
    const began = performance.now();
    expect(await endGroup(identifyGroup(child.pid as number), { graceMs: 300 })).toBe('ended');
    expect(performance.now() - began).toBeGreaterThanOrEqual(290);
    expect(alive(child.pid as number)).toBe(false);
  });

  it('signals nothing for a group recorded on another boot or pid namespace, or without a start time', async () => {
    const file = marksFile();
    const child = group(TRAPPING, file);
    await until(() => marks(file).length === 1, 'the process started');
    const recorded = identifyGroup(child.pid as number);
    expect(await endGroup({ ...recorded, bootId: 'another-boot' })).toBe('unverified');
    expect(await endGroup({ ...recorded, pidNamespace: 'pid:[1]' })).toBe('unverified');
    expect(await endGroup({ ...recorded, leaderStartTicks: null })).toBe('unverified');
    expect(marks(file)).toHaveLength(1);
    expect(alive(child.pid as number)).toBe(true);
  });

  it('reports a group that already ended as gone', async () => {
    const child = group('exit 0');
    const identity = identifyGroup(child.pid as number);
    await once(child, 'exit');
    expect(await endGroup(identity)).toBe('gone');
  });
});

// Issue #20: the recorded-group path signalled any group, this process's own too; a worker started
// inside a run's group (no setsid) would have sent SIGTERM to itself at its first reap.
describe('this process’s own group is never signalled (issue #20, decisions §5 fencing)', () => {
  it('knows its own group, and 0 and 1, as groups never to signal', () => {
    expect(isOwnGroup(readStat(process.pid)?.pgrp as number)).toBe(true);
    expect(isOwnGroup(0)).toBe(true);
    expect(isOwnGroup(1)).toBe(true);
    expect(isOwnGroup(process.pid)).toBe(true);
    const child = group('exec sleep 30');
    expect(isOwnGroup(child.pid as number)).toBe(false);
  });

  it('a process inside another’s group: signalGroup, terminateGroup(s) and endGroup leave the group alone', async () => {
    // `sh` leads the group; the child is a member of it, as a worker a recipe started would be.
    const leader = spawn('sh', ['-c', '"$1" "$2"; echo "exit $?"', 'sh', process.execPath, OWN_GROUP_CHILD], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(leader);
    let out = '';
    leader.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const [code, signal] = await once(leader, 'exit');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const [answers, exit] = out.trim().split('\n');
    expect(JSON.parse(answers as string)).toEqual({
      own: leader.pid,
      leader: false,
      isOwnGroup: true,
      signalGroup: false,
      terminateGroup: 'own',
      terminateGroups: { [leader.pid as number]: 'own' },
      endGroup: 'own',
    });
    expect(exit).toBe('exit 0');
  });
});
