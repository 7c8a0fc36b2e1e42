import type { Command } from 'commander';
import type { SchedulerDescription } from '../../client/types.js';
import { formatInstant, formatZoned } from '../../time/instant.js';
import { timeZone } from '../../time/zone.js';
import { parseCount } from '../arguments.js';
import { withClient, withClientOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';
import { finishedLine, OVERDUE_REASON, pauseLine } from './scheduler-lines.js';

const DST_EFFECT = {
  shifted: 'fall in the gap and fire later by it',
  once: 'happen twice and fire once, at the first instant',
  twice: 'happen twice and fire at both instants (the hour field matches every hour)',
} as const;

const IDLE = {
  paused: 'none: it is paused',
  disabled: 'none: it is disabled (enabled: false)',
  ended: 'none: its endAt has passed',
  'max-runs': 'none: it started maxRuns runs',
} as const;

/** The state line: enabled, paused (who, when, why), disabled, or finished and why. */
function stateOf(d: SchedulerDescription): string {
  if (d.bounds?.finished) return `finished: ${finishedLine(d.bounds)}`;
  if (d.paused !== null) return pauseLine(d.paused);
  return d.enabled ? 'enabled' : 'disabled (enabled: false)';
}

function boundsOf(d: SchedulerDescription): string | undefined {
  const b = d.bounds;
  if (b === null) return undefined;
  const parts = [
    b.startAt === null ? undefined : `startAt ${b.startAt}`,
    b.endAt === null ? undefined : `endAt ${b.endAt}`,
    b.maxRuns === null
      ? undefined
      : `maxRuns ${b.maxRuns} (${b.runsStarted ?? 0} started, ${d.runsLeft ?? 0} left)`,
  ];
  return parts.filter((p) => p !== undefined).join(', ');
}

/** `ursa describe` as text: the scheduler, its next fires, DST notes, counts and newest runs. */
export function describeLines(d: SchedulerDescription): string[] {
  const zone = timeZone(d.timezone);
  const schedule = d.cron !== null ? `cron ${d.cron}` : `at ${d.at ?? ''}`;
  const facts: string[][] = [
    ['schedule', `${schedule} in ${d.timezone}${d.jitter === null ? '' : `, jitter ${d.jitter}`}`],
    ['state', stateOf(d)],
    [
      'overlap',
      `${d.overlap}; lock mode ${d.lockMode}; from the ${d.source === 'tenant' ? '_tenant' : 'project'} document`,
    ],
  ];
  const bounds = boundsOf(d);
  if (bounds !== undefined) facts.push(['bounds', bounds]);
  if (d.pauseOnFailure !== null)
    facts.push(['on failure', `pauses after ${d.pauseOnFailure} failed runs in a row`]);
  if (d.retry !== null)
    facts.push([
      'retry',
      `${d.retry.attempts} attempts in all, waiting ${d.retry.backoff} before the first retry, doubled each time`,
    ]);
  facts.push(['next run', d.overdue ? `${d.nextRunAt}, overdue: ${OVERDUE_REASON}` : (d.nextRunAt ?? '-')]);
  const lines = [`${d.name}: ${d.description}`, ...table(facts).map((l) => `  ${l}`)];
  lines.push('next fires:');
  if (d.upcoming.length === 0)
    lines.push(`  ${d.idle === null ? 'none: no further occurrence' : IDLE[d.idle]}`);
  for (const fire of d.upcoming) {
    const at = Date.parse(fire.firesAt);
    const late = fire.firesAt === fire.occurrence ? '' : `  (occurrence ${fire.occurrence})`;
    lines.push(`  ${formatZoned(at, zone)}  ${formatInstant(at)}${late}`);
  }
  if (d.dst.length > 0) {
    lines.push('daylight saving, next 12 months:');
    for (const n of d.dst) {
      lines.push(
        `  ${n.transition} (${n.offsetBefore} → ${n.offsetAfter}): ${n.count} fire time(s) ${DST_EFFECT[n.effect]}`,
      );
    }
  }
  const byOutcome = Object.entries(d.counts.byOutcome).map(([outcome, n]) => `${outcome} ${n}`);
  lines.push(
    `runs: ${d.counts.runs}${byOutcome.length === 0 ? '' : ` (${byOutcome.join(', ')})`}; coalesced ${d.counts.coalesced}`,
  );
  if (d.recentRuns.length > 0) {
    lines.push('newest runs:');
    const rows = [
      ['RUN', 'TRIGGER', 'OCCURRENCE', 'STATE', 'OUTCOME'],
      ...d.recentRuns.map((r) => [
        r.correlationId,
        r.trigger,
        r.scheduledFor,
        r.state,
        r.outcome === 'pending' ? '' : r.outcome,
      ]),
    ];
    lines.push(...table(rows).map((l) => `  ${l}`));
  }
  return lines;
}

/** `ursa describe <name>` (issue #22 item 8). */
export function registerDescribe(program: Command, io: CliIo): void {
  withClientOptions(program.command('describe'))
    .description(
      'describe a scheduler: its state, pause note and bounds, its next fires (with jitter) and DST notes, its run counts and newest runs',
    )
    .argument('<name>', 'scheduler name')
    .option('-n <count>', 'how many next fires', '5')
    .option('--json', 'print the JSON the REST API answers (GET …/scheduler/{name}/describe)')
    .action((name: string, options: { n: string; json?: boolean }, command: Command) => {
      const count = parseCount(options.n, '-n');
      return withClient(command, io, async (client) => {
        const description = await client.describe(name, count);
        if (options.json) io.stdout.write(`${JSON.stringify(description, null, 2)}\n`);
        else for (const line of describeLines(description)) io.stdout.write(`${line}\n`);
      });
    });
}
