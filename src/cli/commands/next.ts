import type { Command } from 'commander';
import { type DstNote, dstNotes, neverFiresReason, nextFireTimes, parseCron } from '../../cron/index.js';
import { isRefusal, UrsaError } from '../../errors/index.js';
import { formatWall } from '../../time/calendar.js';
import { humanDuration } from '../../time/duration.js';
import { formatInstant, formatOffset, formatZoned, parseInstant } from '../../time/instant.js';
import { type TimeZone, timeZone } from '../../time/zone.js';
import { parseCount } from '../arguments.js';
import { openClient, withClientOptions } from '../context.js';
import type { CliIo } from '../io.js';

function describeNote(note: DstNote, zone: TimeZone): string[] {
  const change = `${formatOffset(note.offsetBefore)} → ${formatOffset(note.offsetAfter)}`;
  const head =
    note.effect === 'shifted'
      ? `spring-forward gap at ${formatInstant(note.transition)} (${change}): ${note.count} matching wall time(s) do not exist and fire later by the gap`
      : note.effect === 'once'
        ? `fall-back overlap at ${formatInstant(note.transition)} (${change}): ${note.count} matching wall time(s) happen twice and fire once, at the first instant`
        : `fall-back overlap at ${formatInstant(note.transition)} (${change}): ${note.count} matching wall time(s) happen twice and fire at both instants (the hour field matches every hour)`;
  const lines = [head];
  for (const example of note.examples) {
    const fires = example.fireTimes.map((t) => `${formatZoned(t, zone)} (${formatInstant(t)})`).join(' and ');
    lines.push(`    ${formatWall(example.wall).replace('T', ' ')} → ${fires}`);
  }
  return lines;
}

interface NextOptions {
  tz: string;
  from?: string;
  n: string;
  json?: boolean;
  batch?: boolean;
  dst?: boolean;
  scheduler?: string;
}

async function runBatch(io: CliIo): Promise<void> {
  for await (const line of io.stdin()) {
    if (line.trim() === '') continue;
    let answer: unknown;
    try {
      let input: { expr?: unknown; zone?: unknown; from?: unknown; count?: unknown };
      try {
        input = JSON.parse(line);
      } catch {
        throw new UrsaError('ARGUMENT_INVALID', 'line: not a JSON object', { field: 'line', value: line });
      }
      const zoneId = input.zone ?? 'UTC';
      if (typeof zoneId !== 'string')
        throw new UrsaError('ZONE_INVALID', 'zone: a string is required', { field: 'zone' });
      const zone = timeZone(zoneId);
      const from = input.from === undefined ? io.clock.now() : parseInstant(String(input.from), 'from');
      const count = input.count === undefined ? 5 : parseCount(input.count, 'count');
      const times = nextFireTimes(parseFiringCron(input.expr), zone, from, count);
      answer = { next: times.map(formatInstant) };
    } catch (error) {
      if (!isRefusal(error)) throw error;
      answer = { error: error.toJSON() };
    }
    io.stdout.write(`${JSON.stringify(answer)}\n`);
  }
}

/**
 * A cron expression that fires, for `ursa next`: one that never fires is refused like an invalid one
 * (exit 2), as a scheduler document refuses it (decisions §3, issue #23).
 *
 * @throws UrsaError `CRON_INVALID` for an invalid expression or one no date matches.
 */
function parseFiringCron(expr: unknown): ReturnType<typeof parseCron> {
  const cron = parseCron(expr);
  const never = neverFiresReason(cron, String(expr));
  if (never !== null) {
    throw new UrsaError('CRON_INVALID', `expression: ${never}`, {
      field: 'expression',
      value: expr,
      allowed: 'day-of-month, month and day-of-week fields that some date matches together',
    });
  }
  return cron;
}

function runSingle(expr: string, options: NextOptions, io: CliIo): void {
  const cron = parseFiringCron(expr);
  const zone = timeZone(options.tz);
  const from = options.from === undefined ? io.clock.now() : parseInstant(options.from, '--from');
  if (options.dst) {
    const oneYearLater = new Date(from);
    oneYearLater.setUTCFullYear(oneYearLater.getUTCFullYear() + 1);
    const notes = dstNotes(cron, zone, from, oneYearLater.getTime());
    if (options.json) {
      io.stdout.write(
        `${JSON.stringify(
          notes.map((n) => ({ ...n, transition: formatInstant(n.transition) })),
          null,
          2,
        )}\n`,
      );
      return;
    }
    if (notes.length === 0) {
      io.stdout.write(
        `No fire time of ${JSON.stringify(expr)} in ${zone.id} falls in a DST gap or overlap in the next 12 months.\n`,
      );
    }
    for (const note of notes) io.stdout.write(`${describeNote(note, zone).join('\n')}\n`);
    return;
  }
  const times = nextFireTimes(cron, zone, from, parseCount(options.n, '-n'));
  if (options.json) {
    io.stdout.write(`${JSON.stringify(times.map(formatInstant))}\n`);
    return;
  }
  if (times.length === 0) {
    io.stdout.write(
      `${JSON.stringify(expr)} has no fire time after ${formatInstant(from)} before the year 10000.\n`,
    );
    return;
  }
  // Mark the fire times that a DST transition moved or repeats, so the listing explains itself.
  const affected = new Map<number, string>();
  const last = times[times.length - 1] as number;
  for (const note of dstNotes(cron, zone, from, last + 1)) {
    const label =
      note.effect === 'shifted' ? 'shifted: wall time in a DST gap' : 'DST overlap: first instant';
    for (const example of note.examples) {
      example.fireTimes.forEach((t, i) => {
        affected.set(t, i === 1 ? 'DST overlap: second instant' : label);
      });
    }
  }
  for (const t of times) {
    const note = affected.get(t);
    io.stdout.write(`${formatZoned(t, zone)}  ${formatInstant(t)}${note ? `  (${note})` : ''}\n`);
  }
}

const IDLE: Record<string, string> = {
  paused: 'is paused: it fires again from its next occurrence once resumed',
  disabled: 'is disabled (enabled: false)',
  ended: 'fires no more: its endAt has passed',
  'max-runs': 'fires no more: it started maxRuns runs',
};

/** `ursa next --scheduler <name>`: a scheduler's own next fires, with its jitter and bounds (issue #22). */
async function runScheduler(name: string, options: NextOptions, command: Command, io: CliIo): Promise<void> {
  for (const [flag, given] of [
    ['--tz', command.getOptionValueSource('tz') === 'cli'],
    ['--dst', options.dst === true],
    ['--batch', options.batch === true],
  ] as const) {
    if (given) {
      throw new UrsaError(
        'ARGUMENT_INVALID',
        `${flag}: not with --scheduler, which reads the scheduler's own`,
        {
          field: flag,
          allowed: '--scheduler <name> with --from, -n and --json',
        },
      );
    }
  }
  const count = parseCount(options.n, '-n');
  if (options.from !== undefined) parseInstant(options.from, '--from');
  const client = await openClient(command, io);
  try {
    const view = await client.upcoming(name, { count, from: options.from });
    if (options.json) {
      io.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
      return;
    }
    if (view.idle !== null) io.stdout.write(`${name} ${IDLE[view.idle]}.\n`);
    else if (view.fires.length === 0) io.stdout.write(`${name} has no further occurrence.\n`);
    const zone = timeZone(view.timezone);
    for (const fire of view.fires) {
      const at = Date.parse(fire.firesAt);
      const late = at - Date.parse(fire.occurrence);
      const jitter =
        view.jitter === null ? '' : `  (occurrence ${fire.occurrence}, jitter +${humanDuration(late)})`;
      io.stdout.write(`${formatZoned(at, zone)}  ${formatInstant(at)}${jitter}\n`);
    }
  } finally {
    await client.close();
  }
}

/** `ursa next`: the next fire times of a cron expression (issue #2), or of a scheduler (issue #22). */
export function registerNext(program: Command, io: CliIo): void {
  withClientOptions(program.command('next'))
    .description(
      "print the next fire times of a cron expression, or a scheduler's own (with its jitter, within its bounds)",
    )
    .argument(
      '[expr]',
      'a six-field cron expression (second minute hour day-of-month month day-of-week) or a macro',
    )
    .option('--tz <zone>', 'IANA time zone the expression is read in', 'UTC')
    .option('--from <instant>', 'start after this ISO-8601 instant (default: now)')
    .option('-n <count>', 'how many fire times', '5')
    .option('--json', 'print a JSON array of ISO-8601 UTC instants')
    .option('--batch', 'read JSON lines {"expr","zone","from","count"} on stdin, answer one JSON line each')
    .option('--dst', 'list the fire times of the next 12 months that fall in a DST gap or overlap')
    .option(
      '--scheduler <name>',
      'the next fires of this scheduler of the project: its cron in its zone, each delayed by its jitter, within its bounds (--json: {name, timezone, jitter, idle, fires: [{occurrence, firesAt}]})',
    )
    .action(async (expr: string | undefined, options: NextOptions, command: Command) => {
      if (options.scheduler !== undefined) {
        if (expr !== undefined) {
          throw new UrsaError('ARGUMENT_INVALID', 'expr: give a cron expression or --scheduler, not both', {
            field: 'expr',
            value: expr,
          });
        }
        return runScheduler(options.scheduler, options, command, io);
      }
      if (options.batch) return runBatch(io);
      if (expr === undefined) {
        throw new UrsaError(
          'ARGUMENT_INVALID',
          'expr: a cron expression is required (or --batch, or --scheduler <name>)',
          {
            field: 'expr',
          },
        );
      }
      runSingle(expr, options, io);
    });
}
