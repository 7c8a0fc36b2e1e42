import { describe, expect, it } from 'vitest';
import { parseCron, timeZone } from '../../src/cron/index.js';
import { jitterOffset } from '../../src/decisions/jitter.js';
import { validateSchedulerDocument } from '../../src/scheduler/document.js';
import { humanDuration } from '../../src/time/duration.js';
import { defaultRange, readInstant, wallText } from '../../web/src/backfill-range.js';
import { describeCron } from '../../web/src/cron-describe.js';
import { previewOf, timelineOf } from '../../web/src/cron-preview.js';
import { parseRoute, routeHash } from '../../web/src/route.js';
import { FIELDS } from '../../web/src/schema-info.js';
import { pathSegments, place, validateText } from '../../web/src/validate.js';
import { zoneToggleText } from '../../web/src/zone-text.js';

// The page's logic without a browser (issue #9): the words for cron expressions, where inline
// problems go, the cron helper's numbers and the routes.

describe('describeCron', () => {
  it.each([
    ['0 0 8 * * MON-FRI', 'at 08:00, Monday to Friday'],
    ['*/10 * * * * *', 'every 10 seconds'],
    ['0 */15 * * * *', 'every 15 minutes'],
    ['0 0 * * * *', 'every hour, on the hour'],
    ['0 0 */2 * * *', 'every 2 hours, on the hour'],
    ['0 15 */3 * * MON-FRI', 'every 3 hours at minute 15, Monday to Friday'],
    ['@daily', 'at 00:00, every day'],
    ['0 30 2 * * 5L', 'at 02:30, on the last Friday of the month'],
    ['0 0 9 * * MON#2', 'at 09:00, on the second Monday of the month'],
    ['0 0 0 1 1 *', 'at 00:00, on the 1st, in January'],
    ['0 0 12 LW * ?', 'at 12:00, on the last weekday of the month'],
    ['0 0 8,17 * * *', 'at 08:00 and 17:00, every day'],
    ['0 15 10 15W * *', 'at 10:15, on the weekday nearest the 15th'],
    ['0 0 4 * * SUN', 'at 04:00, on Sunday'],
    ['0 0 0 13 * FRI', 'at 00:00, on the 13th, if that is also Friday'],
  ])('%s → %s', (expression, words) => {
    parseCron(expression);
    expect(describeCron(expression)).toBe(words);
  });
});

describe('inline problems', () => {
  it('places a bad cron on its value, with the server validator message', () => {
    const text = 'description: x\ncron: "0 0 9 * * MON#6"\nrecipe: noop\n';
    const { problems, definition } = validateText(text, 'morning');
    expect(definition).toBeUndefined();
    const server = validateSchedulerDocument(text, {
      name: 'morning',
      path: '_vance/scheduler/morning.yaml',
    });
    expect(server.ok ? [] : server.issues).toEqual(problems.map(({ path, message }) => ({ path, message })));
    expect(problems).toHaveLength(1);
    const [p] = problems;
    expect(p).toMatchObject({ path: 'cron', line: 2, source: 'local' });
    expect(p?.message).toContain('MON#6');
    expect(text.slice(p?.from, p?.to)).toBe('"0 0 9 * * MON#6"');
  });

  it('places an unknown field on its key, a whole-document issue on line 1, a YAML error at its position', () => {
    const unknown = validateText('description: x\ncron: "@daily"\nrecipe: noop\ncolour: red\n', 'a').problems;
    expect(unknown.map((p) => [p.path, p.line])).toEqual([['colour', 4]]);
    const neither = validateText('description: x\nrecipe: noop\n', 'a').problems;
    expect(neither[0]).toMatchObject({ path: '', line: 1 });
    expect(neither[0]?.message).toContain('exactly one of cron and at');
    const duplicate = validateText(
      'description: x\ncron: "@daily"\nrecipe: noop\nrecipe: other\n',
      'a',
    ).problems;
    expect(duplicate).toHaveLength(1);
    expect(duplicate[0]?.line).toBe(4);
    expect(duplicate[0]?.message).toContain('duplicate key "recipe"');
  });

  it('places a server issue on a list item by its path', () => {
    const text = 'description: x\ncron: "@daily"\nrecipe: noop\ntags:\n  - a\n  - " "\n';
    const [p] = place(text, [{ path: 'tags[1]', message: 'must not be empty' }], 'server');
    expect(p).toMatchObject({ line: 6, source: 'server' });
    expect(pathSegments('params["a.b"].c[2]')).toEqual(['params', 'a.b', 'c', 2]);
  });

  it('knows the schema fields with their enum values and defaults', () => {
    expect(FIELDS.map((f) => f.name)).toEqual([
      'description',
      'cron',
      'at',
      'timezone',
      'enabled',
      'recipe',
      'workflow',
      'params',
      'initialMessage',
      'runAs',
      'overlap',
      'lockMode',
      'tags',
      'misfire',
      'catchUpWindow',
      'startAt',
      'endAt',
      'maxRuns',
      'jitter',
      'pauseOnFailure',
      'retry',
    ]);
    expect(FIELDS.find((f) => f.name === 'lockMode')).toMatchObject({
      kind: 'enum',
      values: ['full', 'protected', 'hidden'],
      defaultValue: 'full',
      required: false,
    });
    expect(FIELDS.find((f) => f.name === 'enabled')?.values).toEqual(['true', 'false']);
    expect(FIELDS.find((f) => f.name === 'description')?.required).toBe(true);
  });
});

describe('the cron helper', () => {
  it('gives the fire times of `ursa next` (README) in both zones, with the DST gap marked', () => {
    const text = 'description: x\ncron: "0 30 2 * * *"\ntimezone: Europe/Berlin\nrecipe: noop\n';
    const { definition } = validateText(text, 'nightly');
    if (definition === undefined) throw new Error('valid');
    const preview = previewOf(
      definition,
      { tenant: 'acme', project: 'ops', name: 'nightly' },
      Date.parse('2026-03-27T00:00:00Z'),
      timeZone('America/New_York'),
      3,
    );
    expect(preview.times.map((t) => [t.inZone, t.dst])).toEqual([
      ['Fri 2026-03-27 02:30:00 +01:00', undefined],
      ['Sat 2026-03-28 02:30:00 +01:00', undefined],
      ['Sun 2026-03-29 03:30:00 +02:00', 'shifted by a DST gap'],
    ]);
    expect(preview.times[0]?.inViewer).toBe('Thu 2026-03-26 21:30:00 -04:00');
    expect(preview.notes).toEqual([
      '2026-03-29 Europe/Berlin: clocks go forward 1 hour (+01:00 → +02:00); 1 fire time in the gap fires 1 hour later (e.g. 02:30:00 fires at 03:30:00 +02:00).',
      '2026-10-25 Europe/Berlin: clocks go back 1 hour (+02:00 → +01:00); 1 fire time in the repeated hour fires once, at the first instant (e.g. 02:30:00).',
    ]);
  });

  // Issue #22: the helper shows what `ursa next --scheduler` shows: jittered fires within the bounds.
  it('delays each fire time by the scheduler offset and keeps to its bounds', () => {
    const text =
      'description: x\ncron: "0 0 * * * *"\ntimezone: UTC\nrecipe: noop\njitter: PT10M\n' +
      'startAt: "2026-06-01T10:00:00Z"\nendAt: "2026-06-01T11:00:00Z"\nmaxRuns: 2\n';
    const { definition } = validateText(text, 'job');
    if (definition === undefined) throw new Error('valid');
    const identity = { tenant: 'acme', project: 'ops', name: 'job' };
    const offset = jitterOffset(identity, 600_000);
    const now = Date.parse('2026-06-01T08:00:00Z');
    const preview = previewOf(definition, identity, now, timeZone('UTC'), 5);
    expect(preview.times.map((t) => t.instant)).toEqual([
      Date.parse('2026-06-01T10:00:00Z') + offset,
      Date.parse('2026-06-01T11:00:00Z') + offset,
    ]);
    expect(preview.limits).toEqual([
      'No run before Mon 2026-06-01 10:00:00 +00:00.',
      'No run after Mon 2026-06-01 11:00:00 +00:00.',
      'At most 2 runs in all, then it stops.',
      `Each run starts ${humanDuration(offset)} after its occurrence (this scheduler's share of its jitter, PT10M); the times above include it.`,
    ]);
    // In _tenant it fires in every project with each project's own offset: the occurrences are shown.
    const shared = previewOf(definition, { ...identity, project: '_tenant' }, now, timeZone('UTC'), 5);
    expect(shared.times.map((t) => t.instant)).toEqual([
      Date.parse('2026-06-01T10:00:00Z'),
      Date.parse('2026-06-01T11:00:00Z'),
    ]);
    expect(shared.limits.at(-1)).toBe(
      'Each run starts up to PT10M after its occurrence, a different share in each project; the times above are the occurrences.',
    );
  });

  it('draws 24 hours of fires per enabled scheduler', () => {
    const rows = timelineOf(
      [
        { name: 'hourly', cron: '0 0 * * * *', at: null, timezone: 'UTC', enabled: true, nextRunAt: null },
        { name: 'off', cron: '0 0 * * * *', at: null, timezone: 'UTC', enabled: false, nextRunAt: null },
        {
          name: 'once',
          cron: null,
          at: '2026-06-01T12:00:00Z',
          timezone: 'UTC',
          enabled: true,
          nextRunAt: '2026-06-01T12:00:00Z',
        },
      ],
      Date.parse('2026-06-01T00:00:00Z'),
    );
    expect(rows.map((r) => [r.scheduler, r.total])).toEqual([
      ['hourly', 23],
      ['once', 1],
    ]);
  });
});

describe('routes', () => {
  it('round-trips every view through the hash', () => {
    const fallback = { tenant: 'default', project: 'demo' };
    for (const route of [
      { view: 'list', tenant: 'acme', project: 'ops' },
      { view: 'new', tenant: 'acme', project: 'ops' },
      { view: 'edit', tenant: 'acme', project: 'ops', name: 'a.b' },
      { view: 'run', tenant: 'acme', project: 'ops', name: 'x', id: 'run_1' },
      { view: 'process', tenant: 'acme', project: 'ops', name: 'x', id: 'proc_1' },
      { view: 'session', tenant: 'acme', project: 'ops', name: 'x', id: 'sess_1' },
      // issue #23: the trash and a recipe.
      { view: 'trash', tenant: 'acme', project: 'ops' },
      { view: 'recipe', tenant: 'acme', project: 'ops', name: 'brief ing' },
    ] as const) {
      expect(parseRoute(routeHash(route), fallback)).toEqual(route);
    }
    expect(parseRoute('', fallback)).toEqual({ view: 'list', ...fallback });
    expect(parseRoute('#/inbox/acme', fallback)).toEqual({ view: 'inbox', tenant: 'acme', project: 'demo' });
  });
});

// issue #23: the backfill dialog's range is read in the zone the editor shows, sent as UTC.
describe('the backfill range in the zone shown', () => {
  const tokyo = timeZone('Asia/Tokyo');
  const paris = timeZone('Europe/Paris');
  it('prefills a day until now as wall times of the zone, to the second', () => {
    const now = Date.parse('2026-05-14T06:00:00.750Z');
    expect(wallText(now, tokyo)).toBe('2026-05-14 15:00:00');
    expect(defaultRange(now, tokyo)).toEqual({ from: '2026-05-13 15:00:00', to: '2026-05-14 15:00:00' });
    expect(defaultRange(now, timeZone('UTC'))).toEqual({
      from: '2026-05-13 06:00:00',
      to: '2026-05-14 06:00:00',
    });
  });

  it('reads a wall time in the zone, and an instant with Z or an offset as it is (decisions §3)', () => {
    expect(readInstant('2026-05-14 15:00:00', tokyo)).toEqual({ instant: '2026-05-14T06:00:00Z' });
    expect(readInstant(' 2026-05-14T15:00 ', tokyo)).toEqual({ instant: '2026-05-14T06:00:00Z' });
    expect(readInstant('2026-05-14T15:00:00Z', tokyo)).toEqual({ instant: '2026-05-14T15:00:00Z' });
    expect(readInstant('2026-05-14 15:00:00+02:00', tokyo)).toEqual({ instant: '2026-05-14T13:00:00Z' });
    // A wall time in the spring-forward gap moves on by the gap; one repeated in autumn is the first.
    expect(readInstant('2026-03-29 02:30:00', paris)).toEqual({ instant: '2026-03-29T01:30:00Z' });
    expect(readInstant('2026-10-25 02:30:00', paris)).toEqual({ instant: '2026-10-25T00:30:00Z' });
    expect(readInstant('yesterday', tokyo)).toEqual({
      problem:
        'not a date-time: write 2026-05-14 08:00:00 (read in Asia/Tokyo), or an instant with Z or an offset',
    });
    expect('problem' in readInstant('2026-02-30 08:00:00', tokyo)).toBe(true);
  });
});

// issue #23: the zone toggle says which zone is shown and which one a press shows.
describe('the zone toggle', () => {
  it('names the zone shown and the other one, and only the one when both are UTC', () => {
    expect(zoneToggleText('local', 'Europe/Paris')).toEqual({
      shown: 'Times in Europe/Paris',
      other: 'show UTC',
    });
    expect(zoneToggleText('utc', 'Europe/Paris')).toEqual({
      shown: 'Times in UTC',
      other: 'show Europe/Paris',
    });
    expect(zoneToggleText('utc', 'UTC')).toEqual({ shown: 'Times in UTC', other: null });
  });
});
