import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jitterOffset } from '../../src/decisions/jitter.js';
import { libraryActor } from '../../src/store/audit.js';
import { openStore, repositories } from '../../src/store/index.js';
import { humanDuration } from '../../src/time/duration.js';
import { formatZoned } from '../../src/time/instant.js';
import { timeZone } from '../../src/time/zone.js';
import { iso } from '../support/cases.js';
import { ursa } from '../support/cli.js';
import { cronScheduler, projectFolder } from '../support/project.js';

// decisions §7: `ursa list` and `ursa get` on a local store (test/cli/remote.test.ts: the same against a server).
describe('ursa list and ursa get', () => {
  it('lists the schedulers of a project with their schedule, zone, state, next and last run', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-list-'));
    expect(await ursa(['list'], { cwd })).toEqual({
      code: 0,
      stdout: 'no schedulers in default/demo\n',
      stderr: '',
    });
    const dir = projectFolder({
      '_vance/scheduler/hb.yaml': cronScheduler('*/10 * * * * *', 'noop'),
      '_vance/scheduler/once.yaml':
        'description: once\nat: "2026-04-01T09:00:00"\ntimezone: Europe/Berlin\nrecipe: noop\nenabled: false\n',
    });
    expect((await ursa(['apply', dir], { cwd })).code).toBe(0);
    const shared = projectFolder({ '_vance/scheduler/shared.yaml': cronScheduler('0 0 6 * * *', 'noop') });
    expect((await ursa(['apply', shared, '--project', '_tenant'], { cwd })).code).toBe(0);
    expect((await ursa(['refresh'], { cwd })).stdout).toMatch(/^default\/demo: 3 scheduler\(s\)\n$/);
    // A document written past validation (an older version of Ursa, say), and a finished run of hb.
    const store = await openStore(join(cwd, 'data', 'ursa.db'));
    try {
      await repositories(store).documents.put(
        { tenant: 'default', project: 'demo', path: '_vance/scheduler/broken.yaml' },
        'description: d\ncron: "61 * * * * *"\nrecipe: noop\n',
        libraryActor('admin'),
        1,
      );
      await repositories(store).feed.append({
        tenant: 'default',
        project: 'demo',
        at: Date.parse('2026-03-28T11:59:50.020Z'),
        kind: 'END',
        refType: 'SCHEDULER',
        refId: 'hb',
        traceId: 'run_1',
        outcome: 'failed',
        logPath: '_vance/logs/scheduler/hb/x.md',
        payload: {},
      });
    } finally {
      await store.close();
    }

    const list = await ursa(['list'], { cwd });
    expect(list.code).toBe(0);
    expect(list.stderr).toBe('');
    expect(list.stdout).toBe(
      [
        'NAME    SCHEDULE                TIMEZONE       ENABLED  NEXT RUN              LAST RUN',
        'hb      cron */10 * * * * *     UTC            yes      2026-03-28T12:00:10Z  failed (2026-03-28T11:59:50.020Z)',
        'once    at 2026-04-01T09:00:00  Europe/Berlin  no       -                     -',
        'shared  cron 0 0 6 * * *        UTC            yes      2026-03-29T06:00:00Z  -',
        'invalid: demo/_vance/scheduler/broken.yaml: cron: second: "61": 61 is out of range',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await ursa(['list', '--json'], { cwd })).stdout);
    expect(json.schedulers.map((s: { name: string }) => s.name)).toEqual(['hb', 'once', 'shared']);
    expect(json.schedulers[0]).toEqual({
      name: 'hb',
      description: 'test scheduler',
      cron: '*/10 * * * * *',
      at: null,
      timezone: 'UTC',
      enabled: true,
      overlap: 'skip',
      lockMode: 'full',
      tags: [],
      source: 'project',
      nextRunAt: '2026-03-28T12:00:10Z',
      overdue: false,
      lastRun: { at: '2026-03-28T11:59:50.020Z', state: 'ended', outcome: 'failed', correlationId: 'run_1' },
      paused: null,
      bounds: null,
    });
    expect(json.schedulers[2]).toMatchObject({ name: 'shared', source: 'tenant' });
    expect(json.invalid).toEqual([
      { path: '_vance/scheduler/broken.yaml', message: expect.stringContaining('61') },
    ]);
  });

  it('prints a scheduler document as YAML, or its detail as JSON; a missing one is NOT_FOUND', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-get-'));
    writeFileSync(
      join(cwd, 'hb.yaml'),
      '# every 10 s\ndescription: hb\ncron: "*/10 * * * * *"\nrecipe: noop',
    );
    expect(
      (await ursa(['set', 'hb', '-f', 'hb.yaml', '--tenant', 'acme', '--project', 'ops'], { cwd })).code,
    ).toBe(0);
    const scope = ['--tenant', 'acme', '--project', 'ops'];
    expect(await ursa(['get', 'hb', ...scope], { cwd })).toEqual({
      code: 0,
      stdout: '# every 10 s\ndescription: hb\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: noop\n',
      stderr: '',
    });
    expect(JSON.parse((await ursa(['get', 'hb', '--json', ...scope], { cwd })).stdout)).toEqual({
      name: 'hb',
      path: '_vance/scheduler/hb.yaml',
      source: 'project',
      version: 1,
      yaml: '# every 10 s\ndescription: hb\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: noop\n',
      createdBy: 'admin',
      updatedAt: '2026-03-28T12:00:00Z',
      nextRunAt: '2026-03-28T12:00:10Z',
      paused: null,
    });
    expect(await ursa(['get', 'hb'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ursa: scheduler "hb" does not exist in default/demo [NOT_FOUND]\n',
    });
    const bad = await ursa(['get', '../x'], { cwd });
    expect([bad.code, bad.stderr.includes('[NAME_INVALID]')]).toEqual([2, true]);
  });

  // Issue #22 item 5: a scheduler past its endAt fires no more, and list says so.
  it('lists a scheduler past its endAt as finished, with the bound that ended it', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-bounds-'));
    const dir = projectFolder({
      '_vance/scheduler/hb.yaml': cronScheduler(
        '*/10 * * * * *',
        'noop',
        'startAt: "2026-03-01T00:00:00Z"\nendAt: "2026-03-20T00:00:00Z"\n',
      ),
    });
    expect((await ursa(['apply', dir], { cwd })).code).toBe(0);
    expect((await ursa(['list'], { cwd })).stdout).toBe(
      [
        'NAME  SCHEDULE             TIMEZONE  ENABLED   NEXT RUN  LAST RUN',
        'hb    cron */10 * * * * *  UTC       finished  -         -',
        'hb: fires no more: its endAt 2026-03-20T00:00:00Z has passed',
        '',
      ].join('\n'),
    );
    expect(JSON.parse((await ursa(['list', '--json'], { cwd })).stdout).schedulers[0].bounds).toEqual({
      startAt: '2026-03-01T00:00:00Z',
      endAt: '2026-03-20T00:00:00Z',
      maxRuns: null,
      runsStarted: null,
      finished: 'ended',
    });
  });

  // Issue #22: pause with a note, shown by list and get, refusing a fire; resume ends it.
  it('pauses with a note that list and get show and a fire is refused with, and resumes', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-pause-'));
    const dir = projectFolder({ '_vance/scheduler/hb.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    expect((await ursa(['apply', dir], { cwd })).code).toBe(0);
    expect(await ursa(['pause', 'hb', '--note', 'vendor API down'], { cwd })).toEqual({
      code: 0,
      stdout: 'hb: paused by admin at 2026-03-28T12:00:00Z: vendor API down (version 2)\n',
      stderr: '',
    });
    const list = await ursa(['list'], { cwd });
    expect(list.stdout).toBe(
      [
        'NAME  SCHEDULE             TIMEZONE  ENABLED  NEXT RUN  LAST RUN',
        'hb    cron */10 * * * * *  UTC       paused   -         -',
        'hb: paused by admin at 2026-03-28T12:00:00Z: vendor API down',
        '',
      ].join('\n'),
    );
    const get = await ursa(['get', 'hb'], { cwd });
    expect([get.code, get.stdout.endsWith('enabled: false\n'), get.stderr]).toEqual([
      0,
      true,
      'paused by admin at 2026-03-28T12:00:00Z: vendor API down\n',
    ]);
    expect(await ursa(['fire', 'hb'], { cwd })).toMatchObject({
      code: 2,
      stderr:
        'ursa: scheduler "hb" was paused by admin at 2026-03-28T12:00:00Z: vendor API down; resume it to fire it [SCHEDULER_PAUSED]\n',
    });
    const inherited = await ursa(['pause', 'hb', '--project', 'other'], { cwd });
    expect([inherited.code, inherited.stderr]).toEqual([
      2,
      'ursa: scheduler "hb" does not exist in default/other [NOT_FOUND]\n',
    ]);
    expect(await ursa(['resume', 'hb'], { cwd })).toEqual({
      code: 0,
      stdout: 'hb: resumed (version 3)\n',
      stderr: '',
    });
    expect((await ursa(['list'], { cwd })).stdout).toMatch(
      /^hb +cron \*\/10 \* \* \* \* \* +UTC +yes +2026-03-28T12:00:10Z/m,
    );
  });

  // Issue #22: `ursa next --scheduler` shows the jittered fire times, within the bounds.
  it("prints a scheduler's next fires delayed by its jitter, no more than maxRuns leaves", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-next-scheduler-'));
    const yaml = cronScheduler('0 0 * * * *', 'noop', 'jitter: PT10M\nmaxRuns: 2\n').replace(
      'UTC',
      'Europe/Berlin',
    );
    expect((await ursa(['apply', projectFolder({ '_vance/scheduler/job.yaml': yaml })], { cwd })).code).toBe(
      0,
    );
    const offset = jitterOffset({ tenant: 'default', project: 'demo', name: 'job' }, 600_000);
    const line = (occurrence: string) => {
      const at = Date.parse(occurrence) + offset;
      const late = humanDuration(offset);
      return `${formatZoned(at, timeZone('Europe/Berlin'))}  ${iso(at)}  (occurrence ${occurrence}, jitter +${late})`;
    };
    expect(await ursa(['next', '--scheduler', 'job'], { cwd })).toEqual({
      code: 0,
      stdout: `${line('2026-03-28T13:00:00Z')}\n${line('2026-03-28T14:00:00Z')}\n`,
      stderr: '',
    });
    const json = JSON.parse(
      (await ursa(['next', '--scheduler', 'job', '-n', '1', '--json'], { cwd })).stdout,
    );
    expect(json).toEqual({
      name: 'job',
      timezone: 'Europe/Berlin',
      jitter: 'PT10M',
      idle: null,
      fires: [
        { occurrence: '2026-03-28T13:00:00Z', firesAt: iso(Date.parse('2026-03-28T13:00:00Z') + offset) },
      ],
    });
    expect(await ursa(['next', '--scheduler', 'job', '--tz', 'UTC'], { cwd })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^ursa: --tz: not with --scheduler/),
    });
    expect((await ursa(['pause', 'job'], { cwd })).code).toBe(0);
    expect(await ursa(['next', '--scheduler', 'job'], { cwd })).toEqual({
      code: 0,
      stdout: 'job is paused: it fires again from its next occurrence once resumed.\n',
      stderr: '',
    });
  });

  // Issue #22 item 8: `ursa describe` (REST and the tool: test/http/describe.test.ts).
  it('describes a scheduler: state, bounds, next fires, DST notes, run counts', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-describe-'));
    const yaml = cronScheduler('0 0 2 * * *', 'noop', 'maxRuns: 4\npauseOnFailure: 3\n').replace(
      'UTC',
      'Europe/Berlin',
    );
    expect(
      (await ursa(['apply', projectFolder({ '_vance/scheduler/nightly.yaml': yaml })], { cwd })).code,
    ).toBe(0);
    expect(await ursa(['describe', 'nightly', '-n', '2'], { cwd })).toEqual({
      code: 0,
      stdout: [
        'nightly: test scheduler',
        '  schedule    cron 0 0 2 * * * in Europe/Berlin',
        '  state       enabled',
        '  overlap     skip; lock mode full; from the project document',
        '  bounds      maxRuns 4 (0 started, 4 left)',
        '  on failure  pauses after 3 failed runs in a row',
        '  next run    2026-03-29T01:00:00Z',
        'next fires:',
        '  Sun 2026-03-29 03:00:00 +02:00  2026-03-29T01:00:00Z',
        '  Mon 2026-03-30 02:00:00 +02:00  2026-03-30T00:00:00Z',
        'daylight saving, next 12 months:',
        '  2026-03-29T01:00:00Z (+01:00 → +02:00): 1 fire time(s) fall in the gap and fire later by it',
        '  2026-10-25T01:00:00Z (+02:00 → +01:00): 1 fire time(s) happen twice and fire once, at the first instant',
        '  2027-03-28T01:00:00Z (+01:00 → +02:00): 1 fire time(s) fall in the gap and fire later by it',
        'runs: 0; coalesced 0',
        '',
      ].join('\n'),
      stderr: '',
    });
    expect(JSON.parse((await ursa(['describe', 'nightly', '--json'], { cwd })).stdout)).toMatchObject({
      name: 'nightly',
      runsLeft: 4,
      pauseOnFailure: 3,
      counts: { runs: 0, byOutcome: {}, coalesced: 0 },
      recentRuns: [],
    });
    expect(await ursa(['describe', 'nope'], { cwd })).toMatchObject({
      code: 2,
      stderr: 'ursa: scheduler "nope" does not exist in default/demo [NOT_FOUND]\n',
    });
  });

  // Issue #22 item 3: `ursa backfill` (the order and the workers: test/runtime/backfill.test.ts).
  it('backfills the past occurrences of a range that have no run, each once, and refuses a bad range', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-backfill-'));
    const dir = projectFolder({ '_vance/scheduler/hourly.yaml': cronScheduler('0 0 * * * *', 'noop') });
    expect((await ursa(['apply', dir], { cwd })).code).toBe(0);
    const range = ['--from', '2026-03-28T08:00:00Z', '--to', '2026-03-28T10:00:00Z'];
    expect(await ursa(['backfill', 'hourly', ...range], { cwd })).toEqual({
      code: 0,
      stdout: expect.stringMatching(
        /^backfill of hourly from 2026-03-28T08:00:00Z to 2026-03-28T10:00:00Z: 3 occurrences, 3 queued\nthey run oldest first, one after another; the first: run_[0-9a-f-]+\nno worker is running: they start when one does/,
      ),
      stderr: '',
    });
    expect(JSON.parse((await ursa(['backfill', 'hourly', ...range, '--json'], { cwd })).stdout)).toEqual({
      scheduler: 'hourly',
      from: '2026-03-28T08:00:00Z',
      to: '2026-03-28T10:00:00Z',
      occurrences: 3,
      queued: 0,
      existing: 3,
      first: null,
    });
    expect(
      await ursa(['backfill', 'hourly', '--from', '2026-01-01T00:00:00Z', '--to', '2026-03-28T00:00:00Z'], {
        cwd,
      }),
    ).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ursa: from..to: the range holds 2,065 occurrences of "0 0 * * * *"; a backfill queues at most 1,000: split it into smaller ranges [ARGUMENT_INVALID]\n  allowed: a range of at most 1000 occurrences\n',
    });
    expect(
      await ursa(['backfill', 'hourly', '--from', '2026-03-28T11:00:00Z', '--to', '2026-03-28T13:00:00Z'], {
        cwd,
      }),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'is later than now (2026-03-28T12:00:00Z); a backfill runs past occurrences only',
      ),
    });
    expect(await ursa(['backfill', 'hourly', '--from', '2026-03-28T08:00:00Z'], { cwd })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("required option '--to <date-time>' not specified"),
    });
  });
});
