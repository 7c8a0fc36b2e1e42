import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ursa as run } from '../support/cli.js';

const ursa = (args: string[], stdin: string[] = []) => run(args, { stdin });

// issue #2: `ursa next`.
describe('ursa next', () => {
  it('prints local time with offset and UTC, and marks a time shifted by a DST gap', async () => {
    const run = await ursa(['next', '0 30 2 * * *', '--tz', 'Europe/Berlin', '-n', '3']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        'Sun 2026-03-29 03:30:00 +02:00  2026-03-29T01:30:00Z  (shifted: wall time in a DST gap)',
        'Mon 2026-03-30 02:30:00 +02:00  2026-03-30T00:30:00Z',
        'Tue 2026-03-31 02:30:00 +02:00  2026-03-31T00:30:00Z',
        '',
      ].join('\n'),
    );
  });

  it('--json prints a JSON array of UTC instants, starting after --from', async () => {
    const run = await ursa(['next', '@daily', '--from', '2026-01-01T00:00:00Z', '-n', '2', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(['2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z']);
  });

  // issue #23: a cron that never fires is a mistake to fix, not an empty answer.
  it('exits non-zero with the reason when an expression never fires', async () => {
    const message =
      'expression: "0 0 0 30 2 *" never fires: no date matches its day-of-month, month and day-of-week fields together';
    const run = await ursa(['next', '0 0 0 30 2 *']);
    expect([run.code, run.stdout]).toEqual([2, '']);
    expect(run.stderr).toContain(`ursa: ${message} [CRON_INVALID]`);
    const json = await ursa(['next', '0 0 0 30 2 *', '--json']);
    expect([json.code, json.stdout]).toEqual([2, '']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'CRON_INVALID', message });
    const batch = await ursa(['next', '--batch'], ['{"expr":"0 0 0 30 2 *"}']);
    expect(JSON.parse(batch.stdout).error).toMatchObject({ code: 'CRON_INVALID', field: 'expression' });
  });

  // issue #23: a Unix (five-field) cron gets the six-field form it most likely means.
  it('suggests the six-field form of a five-field expression', async () => {
    const run = await ursa(['next', '30 2 * * *']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'found 5; the seconds field comes first, so for a Unix cron write "0 30 2 * * *" [CRON_INVALID]',
    );
  });

  it('exits non-zero with the message on stderr for an invalid expression', async () => {
    const run = await ursa(['next', '0 0 9 * * MON#6']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('day-of-week: "MON#6": the occurrence after # must be 1-5');
  });

  // Issue #23 (a newcomer's finding): with --json, a script got a refusal it could not parse.
  it('with --json, writes a refusal as JSON on stderr: code, kind, field, value, what is allowed', async () => {
    const run = await ursa(['next', '61 * * * * *', '--json']);
    expect([run.code, run.stdout]).toEqual([2, '']);
    expect(JSON.parse(run.stderr)).toEqual({
      error: {
        code: 'CRON_INVALID',
        kind: 'input',
        field: 'second',
        value: '61',
        message: 'second: "61": 61 is out of range',
        allowed: '0-59',
      },
    });
    // After `--`, --json is an argument, not the option.
    const plain = await ursa(['validate', '--', '--json']);
    expect(plain.stderr.startsWith('ursa: ')).toBe(true);
  });

  it.each([
    [['next', '@daily', '--tz', 'Nowhere/City'], 'ZONE_INVALID'],
    [['next', '@daily', '--from', 'yesterday'], 'INSTANT_INVALID'],
    [['next', '@daily', '-n', '0'], 'ARGUMENT_INVALID'],
    [['next'], 'ARGUMENT_INVALID'],
  ])('refuses bad arguments %j with %s', async (args, code) => {
    const run = await ursa(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`[${code}]`);
  });

  it('--batch answers one JSON line per input line', async () => {
    const run = await ursa(
      ['next', '--batch'],
      [
        '{"expr":"0 0 12 * * *","zone":"Asia/Tokyo","from":"2026-01-01T00:00:00Z","count":2}',
        '{"expr":"0 0 0 * * 5#6","zone":"UTC","from":"2026-01-01T00:00:00Z","count":1}',
        '{"expr":"@hourly"}',
        'not json',
      ],
    );
    expect(run.code).toBe(0);
    expect(
      run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { next: ['2026-01-01T03:00:00Z', '2026-01-02T03:00:00Z'] },
      {
        error: {
          code: 'CRON_INVALID',
          field: 'day-of-week',
          message: 'day-of-week: "5#6": the occurrence after # must be 1-5',
        },
      },
      {
        next: [
          '2026-03-28T13:00:00Z',
          '2026-03-28T14:00:00Z',
          '2026-03-28T15:00:00Z',
          '2026-03-28T16:00:00Z',
          '2026-03-28T17:00:00Z',
        ],
      },
      { error: { code: 'ARGUMENT_INVALID', field: 'line', message: 'line: not a JSON object' } },
    ]);
  });

  it('--dst lists the fire times of the next 12 months in a gap or an overlap', async () => {
    const run = await ursa(['next', '0 30 2 * * *', '--tz', 'Europe/Berlin', '--dst']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('spring-forward gap at 2026-03-29T01:00:00Z (+01:00 → +02:00)');
    expect(run.stdout).toContain(
      '2026-03-29 02:30:00 → Sun 2026-03-29 03:30:00 +02:00 (2026-03-29T01:30:00Z)',
    );
    expect(run.stdout).toContain('fall-back overlap at 2026-10-25T01:00:00Z (+02:00 → +01:00)');
    expect(run.stdout).toContain('spring-forward gap at 2027-03-28T01:00:00Z');
    expect(run.stdout).not.toContain('2027-10-31');
  });

  // A newcomer's `ursa runs heartbeat | head -3` crashed with an unhandled EPIPE (helper review).
  it('exits quietly when its reader closes the pipe early', () => {
    const bin = resolve(import.meta.dirname, '../../dist/cli/main.js');
    // 1,000 lines are more than a pipe holds, so the CLI writes after `head` has gone.
    const out = execFileSync(
      'bash',
      [
        '-c',
        'set -o pipefail; "$0" "$1" next "* * * * * *" -n 1000 2>&1 | head -1 >/dev/null; echo "rc=$?"',
        process.execPath,
        bin,
      ],
      { encoding: 'utf8' },
    );
    expect(out).toBe('rc=0\n');
  });

  it('runs as the built `ursa` bin', () => {
    const bin = resolve(import.meta.dirname, '../../dist/cli/main.js');
    const out = execFileSync(
      process.execPath,
      [
        bin,
        'next',
        '0 0 8 * * MON-FRI',
        '--tz',
        'Europe/Berlin',
        '--from',
        '2026-05-15T00:00:00Z',
        '-n',
        '2',
        '--json',
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(out)).toEqual(['2026-05-15T06:00:00Z', '2026-05-18T06:00:00Z']);
  });
});
