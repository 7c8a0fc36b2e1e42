import type { Command } from 'commander';
import type {
  EventView,
  HistoryEntryView,
  InboxItemView,
  PageRequest,
  RunView,
  UrsaClient,
} from '../../client/types.js';
import { inboxItemSchema, runSchema } from '../../contract/index.js';
import { UrsaError } from '../../errors/index.js';
import { parseCount } from '../arguments.js';
import { openClient, withClient, withClientOptions } from '../context.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';

/** Whose inbox `ursa inbox` shows without `--user` (on a server: the token's user). */
const DEFAULT_USER = 'admin';

/** A feed-line or inbox-item id: a whole number ≥ 1. */
export function parseId(value: string, field: string): number {
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UrsaError('ARGUMENT_INVALID', `${field}: ${JSON.stringify(value)} is not an id`, {
      field,
      value,
      allowed: 'a whole number ≥ 1',
    });
  }
  return n;
}

/** The fields of a run, in the contract's order (`ursa runs --json`). */
const RUN_FIELDS = Object.keys(runSchema.shape) as (keyof RunView)[];

/** `ursa runs --json`: a run as the contract has it; fields a newer server adds are left out. */
function runJson(run: RunView): Partial<RunView> {
  return Object.fromEntries(RUN_FIELDS.map((field) => [field, run[field]]));
}

/** The fields of an inbox item, in the contract's order (`ursa inbox --json`). */
const INBOX_FIELDS = Object.keys(inboxItemSchema.shape) as (keyof InboxItemView)[];

/** `ursa inbox --json`: an item as the contract has it; fields a newer server adds are left out. */
function inboxJson(item: InboxItemView): Partial<InboxItemView> {
  return Object.fromEntries(INBOX_FIELDS.map((field) => [field, item[field]]));
}

/** The options of a command that lists one page: `-n`, `--before`, `--json`. */
interface PageOptions {
  readonly n: string;
  readonly before?: string;
  readonly json?: boolean;
}

/**
 * Prints one page of what `fetch` lists about `subject` (a scheduler, a document path; undefined:
 * the project): as lines,
 * or with `--json` as a JSON array (the next page's cursor then goes to standard error), or a
 * "no … of <subject>" line when the page is empty.
 */
async function printPage<T>(
  command: Command,
  io: CliIo,
  subject: string | undefined,
  options: PageOptions,
  listing: {
    readonly noun: string;
    readonly fetch: (
      client: UrsaClient,
      page: PageRequest,
    ) => Promise<{ readonly items: readonly T[]; readonly nextCursor: number | null }>;
    readonly json: (item: T) => unknown;
    readonly lines: (items: readonly T[]) => string[];
  },
): Promise<void> {
  const limit = parseCount(options.n, 'n');
  const before = options.before === undefined ? undefined : parseId(options.before, 'before');
  const client = await openClient(command, io);
  try {
    const { tenant, project } = client.scope;
    const page = await listing.fetch(client, { limit, before });
    const next = page.nextCursor === null ? '' : `next page: --before ${page.nextCursor}\n`;
    if (options.json) {
      io.stdout.write(`${JSON.stringify(page.items.map(listing.json), null, 2)}\n`);
      io.stderr.write(next);
      return;
    }
    if (page.items.length === 0) {
      io.stdout.write(
        `no ${before === undefined ? '' : 'older '}${listing.noun}${subject === undefined ? '' : ` of ${JSON.stringify(subject)}`} in ${tenant}/${project}\n`,
      );
    } else for (const line of listing.lines(page.items)) io.stdout.write(`${line}\n`);
    io.stdout.write(next);
  } finally {
    await client.close();
  }
}

/** How a run relates to the others of its lane, in a few words (issue #23). */
function laneNote(r: RunView): string {
  if (r.foldedInto !== null) return `folded into ${r.foldedInto}`;
  const folded = r.folded === null ? '' : `, ${r.folded.count} folded in`;
  if (r.waitingBehind !== null)
    return `${r.state === 'queued' ? 'waiting' : 'waited'} behind ${r.waitingBehind}${folded}`;
  return folded.slice(2);
}

/**
 * A header, then one line per run, by occurrence: scheduledFor, state, outcome (once ended or skipped), duration,
 * trigger, the coalesced marker and the lane note (when any run has them), logPath.
 */
function runLines(runs: readonly RunView[]): string[] {
  const marked = runs.some((r) => r.coalesced);
  const noted = runs.some((r) => laneNote(r) !== '');
  const header = [
    'OCCURRENCE',
    'STATE',
    'OUTCOME',
    'DURATION',
    'TRIGGER',
    ...(marked ? [''] : []),
    ...(noted ? ['LANE'] : []),
    'RUN LOG',
  ];
  return table(
    [
      header,
      ...runs.map((r) => [
        r.scheduledFor,
        r.state,
        r.outcome === 'pending' ? '' : r.outcome,
        r.durationMs === null ? '' : `${r.durationMs} ms`,
        r.trigger,
        ...(marked ? [r.coalesced ? 'coalesced' : ''] : []),
        ...(noted ? [laneNote(r)] : []),
        r.logPath,
      ]),
    ],
    new Set([3]),
  );
}

/** `ursa runs <name>`: a scheduler's runs by occurrence, the latest first, queued ones included. */
function registerRuns(program: Command, io: CliIo): void {
  withClientOptions(program.command('runs'))
    .description(
      'list the runs of a scheduler by occurrence, the latest first, queued and running ones included',
    )
    .argument('<name>', 'scheduler name')
    .option('-n <count>', 'how many runs (1-1000)', '20')
    .option('--before <cursor>', 'the page below this cursor (printed as "next page: --before N")')
    .option('--json', 'print a JSON array of runs (the cursor of the next page goes to stderr)')
    .action((name: string, options: PageOptions, command: Command) =>
      printPage(command, io, name, options, {
        noun: 'runs',
        fetch: async (client, page) => {
          const found = await client.runs(name, page);
          return { items: found.runs, nextCursor: found.nextCursor };
        },
        json: runJson,
        lines: runLines,
      }),
    );
}

/** A header, then one line per feed line: at, kind, outcome, correlationId (traceId), logPath. */
function eventLines(events: readonly EventView[]): string[] {
  return table([
    ['AT', 'KIND', 'OUTCOME', 'RUN', 'RUN LOG'],
    ...events.map((e) => [e.at, e.kind, e.outcome, e.traceId, e.logPath ?? '-']),
  ]);
}

/** `ursa events [name]`: a scheduler's feed lines (spec §7), or the project's, newest first. */
function registerEvents(program: Command, io: CliIo): void {
  withClientOptions(program.command('events'))
    .description(
      "list the activity-feed lines (START, END, SKIPPED) of a scheduler, or without a name the project's, newest first",
    )
    .argument('[name]', "scheduler name; without it, every scheduler's lines")
    .option('-n <count>', 'how many lines (1-1000)', '20')
    .option('--before <cursor>', 'the page below this line id (printed as "next page: --before N")')
    .option('--kind <kinds>', 'only lines of these kinds: START, END, SKIPPED, comma-separated')
    .option('--run <correlationId>', 'only the lines of this run')
    .option('--since <instant>', 'only lines at or after this ISO-8601 instant, e.g. 2026-05-14T06:00:00Z')
    .option('--until <instant>', 'only lines before this ISO-8601 instant')
    .option('--json', 'print a JSON array of feed lines (the cursor of the next page goes to stderr)')
    .action((name: string | undefined, options: EventOptions, command: Command) =>
      printPage(command, io, name, options, {
        noun: 'events',
        fetch: async (client, page) => {
          const { kind, run, since, until } = options;
          const narrowed = [kind, run, since, until].some((o) => o !== undefined);
          const found =
            name !== undefined && !narrowed
              ? await client.events(name, page)
              : await client.feed({ ...page, scheduler: name, kind, correlationId: run, since, until });
          return { items: found.events, nextCursor: found.nextCursor };
        },
        json: (event) => event,
        // The project's lines say whose they are.
        lines: name === undefined ? projectEventLines : eventLines,
      }),
    );
}

/** `ursa events` of a project: a feed line with its scheduler after its kind. */
function projectEventLines(events: readonly EventView[]): string[] {
  return table([
    ['AT', 'KIND', 'SCHEDULER', 'OUTCOME', 'RUN', 'RUN LOG'],
    ...events.map((e) => [e.at, e.kind, e.refId, e.outcome, e.traceId, e.logPath ?? '-']),
  ]);
}

/** The options of `ursa events`: a page, narrowed. */
interface EventOptions extends PageOptions {
  readonly kind?: string;
  readonly run?: string;
  readonly since?: string;
  readonly until?: string;
}

/** One summary line per item (id, created, kind, read state, title), then its body and log indented. */
function inboxLines(items: readonly InboxItemView[]): string[] {
  const summaries = table(
    items.map((i) => [String(i.id), i.createdAt, i.kind, i.readAt === null ? 'unread' : 'read', i.title]),
    new Set([0]),
  );
  return items.flatMap((item, n) => [
    summaries[n] as string,
    ...item.body
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => `    ${l}`),
    ...(item.logPath === null ? [] : [`    log: ${item.logPath}`]),
    ...questionLines(item),
  ]);
}

/** A question's answer, who gave it and when; or how to answer it. */
function questionLines(item: InboxItemView): string[] {
  if (item.kind !== 'question') return [];
  if (item.answeredAt === null || item.answeredAt === undefined)
    return [`    not answered yet: ursa inbox answer ${item.id} "<your answer>"`];
  return [
    `    answered by ${item.answeredBy ?? ''} at ${item.answeredAt}:`,
    ...(item.answer ?? '').split('\n').map((l) => `      ${l}`),
  ];
}

/** `ursa inbox`, `ursa inbox read` and `ursa inbox answer`: a user's inbox items (decisions §2, issue #25). */
function registerInbox(program: Command, io: CliIo): void {
  const inbox = withClientOptions(program.command('inbox'))
    .description("list a user's inbox items, newest first (unread ones unless --all)")
    .option('--user <user>', `whose inbox (default ${DEFAULT_USER}; with --url, the token's user)`)
    .option('--all', 'include items already read')
    .option('-n <count>', 'how many items (1-1000)', '20')
    .option('--before <id>', 'the page below this item id (printed as "next page: --before N")')
    .option('--json', 'print a JSON array of items (the cursor of the next page goes to stderr)')
    .action(
      async (
        options: { user?: string; all?: boolean; n: string; before?: string; json?: boolean },
        command: Command,
      ) => {
        const limit = parseCount(options.n, 'n');
        const before = options.before === undefined ? undefined : parseId(options.before, 'before');
        await withClient(command, io, async (client) => {
          const { tenant } = client.scope;
          const page = await client.inbox({ user: options.user, all: options.all === true, limit, before });
          const next = page.nextCursor === null ? '' : `next page: --before ${page.nextCursor}\n`;
          if (options.json) {
            io.stdout.write(`${JSON.stringify(page.items.map(inboxJson), null, 2)}\n`);
            io.stderr.write(next);
            return;
          }
          if (page.items.length === 0) {
            io.stdout.write(
              `no ${before === undefined ? '' : 'older '}${options.all ? '' : 'unread '}items for ${page.user ?? "the token's user"} in ${tenant}\n`,
            );
          }
          for (const line of inboxLines(page.items)) io.stdout.write(`${line}\n`);
          io.stdout.write(next);
        });
      },
    );

  withClientOptions(inbox.command('read'))
    .description("mark a user's inbox items read")
    .argument('<id...>', 'item ids (as `ursa inbox` prints them)')
    .option('--user <user>', `whose items (default ${DEFAULT_USER}; with --url, the token's user)`)
    .action(async (ids: string[], _options: unknown, command: Command) => {
      const parsed = ids.map((id) => parseId(id, 'id'));
      // `--user` after `read` may land on either command; the parent's value wins, as for --db.
      const user = command.optsWithGlobals<{ user?: string }>().user;
      await withClient(command, io, async (client) => {
        const { tenant } = client.scope;
        const wanted = new Set(parsed).size;
        const { user: whose, count } = await client.inboxRead(user, parsed);
        io.stdout.write(
          count === wanted
            ? `marked read: ${count}\n`
            : `marked read: ${count} of ${wanted} (the others are read already or not items of ${whose ?? "the token's user"} in ${tenant})\n`,
        );
      });
    });

  withClientOptions(inbox.command('answer'))
    .description(
      'answer a question an agent run asked in the inbox; the agent service gets it at the next pass',
    )
    .argument('<id>', 'the question item id (as `ursa inbox` prints it)')
    .argument('<answer>', 'the answer, as one argument (quote it)')
    .option('--user <user>', `whose item (default ${DEFAULT_USER}; with --url, the token's user)`)
    .action(async (id: string, answer: string, _options: unknown, command: Command) => {
      const item = parseId(id, 'id');
      const user = command.optsWithGlobals<{ user?: string }>().user;
      await withClient(command, io, async (client) => {
        const done = await client.inboxAnswer(user, item, answer);
        io.stdout.write(
          `answered ${done.id} as ${done.answeredBy}; it goes to the agent service at the next pass\n`,
        );
      });
    });
}

/**
 * A header, then one line per history entry: at, action, version, user, the token id (`cli` for a
 * local command, `-` for a library call or Ursa itself), interface, `agent` for an agent's.
 */
function historyLines(entries: readonly HistoryEntryView[]): string[] {
  return table(
    [
      ['AT', 'ACTION', 'VERSION', 'USER', 'TOKEN', 'INTERFACE', 'AGENT'],
      ...entries.map((e) => [
        e.at,
        e.action,
        String(e.version),
        e.user,
        e.tokenId ?? (e.interface === 'cli' ? 'cli' : '-'),
        e.interface,
        e.agent ? 'agent' : '',
      ]),
    ],
    new Set([2]),
  ).map((line) => line.trimEnd());
}

/** `ursa doc history <path>`: who wrote each version of a document, deleted and restored it (issue #19). */
function registerDocHistory(program: Command, io: CliIo): void {
  const doc = program.commands.find((c) => c.name() === 'doc') ?? program.command('doc');
  withClientOptions(doc.command('history'))
    .description('list who wrote each version of a document, deleted and restored it, newest first')
    .argument('<path>', 'document path, e.g. _vance/scheduler/heartbeat.yaml (or its _vance/trash/ path)')
    .option('-n <count>', 'how many entries (1-1000)', '20')
    .option('--before <cursor>', 'the page below this cursor (printed as "next page: --before N")')
    .option('--json', 'print a JSON array of entries (the cursor of the next page goes to stderr)')
    .action((path: string, options: PageOptions, command: Command) =>
      printPage(command, io, path, options, {
        noun: 'history',
        fetch: async (client, page) => {
          const found = await client.docHistory(path, page);
          return { items: found.history, nextCursor: found.nextCursor };
        },
        json: (entry) => entry,
        lines: historyLines,
      }),
    );
}

/**
 * The history commands (issue #5): `runs` and `events` from the activity feed, the inbox, and
 * `doc history` from the audit trail (issue #19; added to the `doc` command of `store-commands.ts`).
 */
export function registerHistoryCommands(program: Command, io: CliIo): void {
  registerRuns(program, io);
  registerEvents(program, io);
  registerInbox(program, io);
  registerDocHistory(program, io);
}
