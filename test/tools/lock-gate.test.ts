import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/service/caller.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { AgentScope } from '../../src/tools/agent-scope.js';
import { type AgentIdentity, callTool, TOOLS, type ToolResult } from '../../src/tools/toolset.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const P = 'ops';
const agent: AgentIdentity = { tenant: T, project: P, user: 'mia' };
const person = (project: string): Caller => ({ tenant: T, project, user: 'ada', role: 'admin' });
const doc = (lockMode: string, extra = '') =>
  `description: backup\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\nlockMode: ${lockMode}\n${extra}`;

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function call(tool: string, input: unknown = {}): Promise<ToolResult> {
  return callTool((t as TestRuntime).rt, agent, TOOLS, tool, input);
}

/** What the agent sees of a scheduler named `backup`, for each tool (spec §10b). */
async function observe() {
  const list = await call('scheduler_list');
  const listed = list.ok
    ? (list.output as { schedulers: { name: string; locked?: true }[] }).schedulers.find(
        (s) => s.name === 'backup',
      )
    : undefined;
  const get = await call('scheduler_get', { name: 'backup' });
  const fire = await call('scheduler_fire', { name: 'backup' });
  // Issue #22: a backfill runs as a fire does: what the agent may see, it may backfill.
  const backfill = await call('scheduler_backfill', {
    name: 'backup',
    from: '2026-05-30T00:00:00Z',
    to: '2026-05-31T23:59:59Z',
  });
  // runAs: mia, the agent's own user: without it the scheduler would keep running as its creator
  // (ada), which decisions §6 refuses (test/hostile/run-as.test.ts); here only the lock gate decides.
  const set = await call('scheduler_set', {
    name: 'backup',
    yaml: doc('full', 'runAs: mia\n').replace('03', '04'),
  });
  const del = await call('scheduler_delete', { name: 'backup' });
  const code = (r: ToolResult) => (r.ok ? 'allowed' : r.error.code);
  return {
    list: listed === undefined ? 'not listed' : listed.locked ? 'listed, locked' : 'listed',
    get: get.ok
      ? (get.output as { locked: boolean }).locked
        ? 'visible, locked'
        : 'visible'
      : get.error.code,
    fire: code(fire),
    backfill: code(backfill),
    set: code(set),
    delete: code(del),
  };
}

// The spec §10b table as a matrix: each lock mode × each tool, as the agent sees it.
describe('the lock-mode gate for agent tools (spec §10b)', () => {
  it.each([
    [
      'full',
      {
        list: 'listed',
        get: 'visible',
        fire: 'allowed',
        backfill: 'allowed',
        set: 'allowed',
        delete: 'allowed',
      },
    ],
    [
      'protected',
      {
        list: 'listed, locked',
        get: 'visible, locked',
        fire: 'allowed',
        backfill: 'allowed',
        set: 'LOCKED',
        delete: 'LOCKED',
      },
    ],
    [
      'hidden',
      {
        list: 'not listed',
        get: 'NOT_FOUND',
        fire: 'NOT_FOUND',
        backfill: 'NOT_FOUND',
        set: 'LOCKED',
        delete: 'LOCKED',
      },
    ],
  ])('a project scheduler with lockMode %s', async (mode, expected) => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await setScheduler(t.rt, person(P), 'backup', doc(mode));
    expect(await observe()).toEqual(expected);
  });

  it.each([
    [
      'protected',
      {
        list: 'listed, locked',
        get: 'visible, locked',
        fire: 'allowed',
        backfill: 'allowed',
        set: 'LOCKED',
        delete: 'LOCKED',
      },
    ],
    [
      'hidden',
      {
        list: 'not listed',
        get: 'NOT_FOUND',
        fire: 'NOT_FOUND',
        backfill: 'NOT_FOUND',
        set: 'LOCKED',
        delete: 'LOCKED',
      },
    ],
  ])(
    'a tenant scheduler with lockMode %s cannot be overridden by a project scheduler of the same name',
    async (mode, expected) => {
      t = await testRuntime('2026-06-01T08:00:00Z');
      await setScheduler(t.rt, person('_tenant'), 'backup', doc(mode));
      await setScheduler(t.rt, person(P), 'other', doc('full')); // makes the project active
      expect(await observe()).toEqual(expected);
      expect(
        await t.rt.repos.documents.get({ tenant: T, project: P, path: '_vance/scheduler/backup.yaml' }),
      ).toBeUndefined();
    },
  );

  it('tells a hidden name apart from a missing one in no way but the lock error on writes', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await setScheduler(t.rt, person(P), 'backup', doc('hidden'));
    const hidden = await call('scheduler_get', { name: 'backup' });
    const missing = await call('scheduler_get', { name: 'nothing' });
    expect(hidden.ok || missing.ok).toBe(false);
    if (!hidden.ok && !missing.ok) {
      expect(hidden.error.message.replace('backup', 'X')).toBe(missing.error.message.replace('nothing', 'X'));
    }
  });

  it('lets an agent restrict itself: create protected or hidden, raise full to protected, never lower', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    expect((await call('scheduler_set', { name: 'a', yaml: doc('protected') })).ok).toBe(true);
    expect((await call('scheduler_set', { name: 'b', yaml: doc('hidden') })).ok).toBe(true);
    expect((await call('scheduler_set', { name: 'c', yaml: doc('full') })).ok).toBe(true);
    expect((await call('scheduler_set', { name: 'c', yaml: doc('protected') })).ok).toBe(true);
    const lower = await call('scheduler_set', { name: 'c', yaml: doc('full') });
    expect(lower).toMatchObject({ ok: false, error: { code: 'LOCKED' } });
  });

  it('refuses an agent write when a person locks the scheduler after the tool call began (issue #19)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    const rt = t.rt;
    await rt.repos.users.ensure(T, 'mia', 0);
    await setScheduler(rt, person(P), 'backup', doc('full', 'runAs: mia\n'));
    for (const write of ['set', 'delete'] as const) {
      // The scope was read while the scheduler was full; the person locks it before the write.
      const scope = await AgentScope.open(rt, agent);
      await setScheduler(rt, person(P), 'backup', doc('protected', 'runAs: mia\n'));
      const attempt =
        write === 'set' ? scope.set('backup', doc('full', 'runAs: mia\n')) : scope.delete('backup');
      await expect(attempt).rejects.toMatchObject({ code: 'LOCKED' });
      const stored = await rt.repos.documents.get({
        tenant: T,
        project: P,
        path: '_vance/scheduler/backup.yaml',
      });
      expect(stored?.body).toContain('lockMode: protected');
      await setScheduler(rt, person(P), 'backup', doc('full', 'runAs: mia\n'));
    }
  });

  it('refuses a runAs other than the calling user, with the field and what is allowed (decisions §6)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await t.rt.repos.users.ensure(T, 'bob', 0);
    const result = await call('scheduler_set', { name: 'x', yaml: doc('full', 'runAs: bob\n') });
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'FORBIDDEN',
        message: 'runAs: an agent may only run schedulers as its own user (mia); leave runAs out',
        issues: [{ path: 'runAs', message: 'may only be mia, or left out' }],
      },
    });
    expect((await call('scheduler_set', { name: 'x', yaml: doc('full', 'runAs: mia\n') })).ok).toBe(true);
  });

  it('fills the time zone from the user’s display zone, keeping the YAML and its comments (spec §10c)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await t.rt.repos.users.ensure(T, 'mia', 0, 'Asia/Tokyo');
    const yaml =
      '# daily stand-up reminder\ndescription: stand-up   # for the team\ncron: "0 0 9 * * MON-FRI"\nrecipe: noop\n';
    const result = await call('scheduler_set', { name: 'standup', yaml });
    expect(result).toEqual({
      ok: true,
      output: { name: 'standup', created: true, version: 1, timezone: 'Asia/Tokyo', warnings: [] },
    });
    const stored = await t.rt.repos.documents.get({
      tenant: T,
      project: P,
      path: '_vance/scheduler/standup.yaml',
    });
    expect(stored?.body).toBe(
      '# daily stand-up reminder\ndescription: stand-up # for the team\ncron: "0 0 9 * * MON-FRI"\ntimezone: Asia/Tokyo\nrecipe: noop\n',
    );
    const explicit = await call('scheduler_set', {
      name: 'berlin',
      yaml: `${yaml}timezone: Europe/Berlin\n`,
    });
    expect(explicit).toMatchObject({ ok: true, output: { timezone: 'Europe/Berlin' } });
  });

  it('answers bad input as an error result naming the field, never a crash', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    expect(await call('scheduler_get', {})).toMatchObject({
      ok: false,
      error: { code: 'ARGUMENT_INVALID', issues: [{ path: 'name' }] },
    });
    const bad = await call('scheduler_set', {
      name: 'x',
      yaml: 'description: d\ncron: "0 0 9 * * MON#6"\nrecipe: noop\n',
    });
    expect(bad).toMatchObject({
      ok: false,
      error: { code: 'SCHEDULER_INVALID', issues: [{ path: 'cron' }] },
    });
    // Issue #23: a scheduler document is readable now; the trash never is, whatever is there.
    expect(await call('document_read', { path: '_vance/trash/x.yaml' })).toMatchObject({
      ok: false,
      error: { code: 'ARGUMENT_INVALID' },
    });
  });
});

// Issue #22: an agent pauses and resumes what it may change, with a note people see; a locked
// scheduler it may not pause, and a hidden one does not exist for it.
describe('scheduler_pause and scheduler_resume behind the lock-mode gate', () => {
  it.each([
    ['full', 'allowed'],
    ['protected', 'LOCKED'],
    ['hidden', 'LOCKED'],
  ])('on a %s scheduler: %s', async (lockMode, expected) => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await setScheduler(t.rt, person(P), 'backup', doc(lockMode));
    const paused = await call('scheduler_pause', { name: 'backup', note: 'disk full' });
    expect(paused.ok ? 'allowed' : paused.error.code).toBe(expected);
    const document = await t.rt.repos.documents.get({
      tenant: T,
      project: P,
      path: '_vance/scheduler/backup.yaml',
    });
    expect(document?.body.endsWith('enabled: false\n')).toBe(expected === 'allowed');
    if (expected !== 'allowed') return;
    expect(paused.ok && paused.output).toEqual({
      name: 'backup',
      version: 2,
      enabled: false,
      paused: { note: 'disk full', by: 'mia', at: '2026-06-01T08:00:00Z' },
    });
    const list = await call('scheduler_list');
    expect(list.ok && (list.output as { schedulers: { paused: unknown }[] }).schedulers[0]?.paused).toEqual({
      note: 'disk full',
      by: 'mia',
      at: '2026-06-01T08:00:00Z',
    });
    const resumed = await call('scheduler_resume', { name: 'backup' });
    expect(resumed.ok && resumed.output).toEqual({ name: 'backup', version: 3, enabled: true, paused: null });
  });
});
