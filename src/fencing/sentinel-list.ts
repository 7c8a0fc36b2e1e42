import { checkRecorded, type GroupEnding, terminateGroups } from '../processes/group-ending.js';
import { hostIdentity } from '../processes/process-group.js';

/**
 * A process group as the sentinel knows it: what `checkRecorded` needs to signal it safely, on the
 * host, boot and pid namespace the sentinel shares with its worker.
 */
export interface WatchedGroup {
  /** The process group id: the pid of its leader. */
  readonly pgid: number;
  /** The leader's start time, clock ticks since boot (`/proc/<pid>/stat` field 22). */
  readonly leaderStartTicks: number;
}

/**
 * What a worker tells its sentinel, one line each on the sentinel's standard input: a group its
 * runs started, a group whose engine returned, and the goodbye of a clean stop.
 */
export type SentinelMessage =
  | { readonly kind: 'added'; readonly group: WatchedGroup }
  | { readonly kind: 'removed'; readonly group: WatchedGroup }
  | { readonly kind: 'goodbye' };

const GOODBYE = 'bye';
const SIGNS = { added: '+', removed: '-' } as const;

/**
 * A group as one argument of the sentinel's command line, `<pgid>:<ticks>`: the groups running
 * when it is started, which it knows from its exec on (see `Sentinel`).
 */
export function encodeGroup(group: WatchedGroup): string {
  return `${group.pgid}:${group.leaderStartTicks}`;
}

/** The group of one argument ({@link encodeGroup}); undefined for an argument that is none. */
export function decodeGroup(argument: string): WatchedGroup | undefined {
  const [, pgid, ticks] = /^(\d{1,15}):(\d{1,15})$/u.exec(argument) ?? [];
  return pgid === undefined ? undefined : { pgid: Number(pgid), leaderStartTicks: Number(ticks) };
}

/** The line of `message`, newline included: `+ <pgid> <ticks>`, `- <pgid> <ticks>` or `bye`. */
export function encodeMessage(message: SentinelMessage): string {
  if (message.kind === 'goodbye') return `${GOODBYE}\n`;
  return `${SIGNS[message.kind]} ${message.group.pgid} ${message.group.leaderStartTicks}\n`;
}

/** The message of one line (without its newline); undefined for a line that is none. */
export function decodeMessage(line: string): SentinelMessage | undefined {
  if (line === GOODBYE) return { kind: 'goodbye' };
  const [, sign, pgid, ticks] = /^([+-]) (\d{1,15}) (\d{1,15})$/u.exec(line) ?? [];
  if (sign === undefined) return undefined;
  const group = { pgid: Number(pgid), leaderStartTicks: Number(ticks) };
  return { kind: sign === SIGNS.added ? 'added' : 'removed', group };
}

/**
 * The sentinel's list (decisions §5 fencing): the groups its worker has running now, from the
 * worker's messages, and whether the worker said goodbye. Text arrives in chunks that need not
 * end at a line's end; a line that is no message is ignored.
 */
export class Watchlist {
  // By `<pgid> <ticks>`, with how many times it was added and not yet removed.
  readonly #groups = new Map<string, { group: WatchedGroup; count: number }>();
  #partial = '';
  #goodbye = false;

  /** Applies the complete lines of `chunk` (with what is left of earlier chunks). */
  read(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) {
      const message = decodeMessage(line);
      if (message !== undefined) this.apply(message);
    }
  }

  apply(message: SentinelMessage): void {
    if (message.kind === 'goodbye') {
      this.#goodbye = true;
      return;
    }
    const key = `${message.group.pgid} ${message.group.leaderStartTicks}`;
    const entry = this.#groups.get(key);
    if (message.kind === 'added')
      this.#groups.set(key, { group: message.group, count: (entry?.count ?? 0) + 1 });
    else if (entry !== undefined && entry.count > 1) entry.count--;
    else this.#groups.delete(key);
  }

  /** Whether the worker said goodbye: it stopped cleanly, its runs ended. */
  get goodbye(): boolean {
    return this.#goodbye;
  }

  /** The groups listed now. */
  get groups(): WatchedGroup[] {
    return [...this.#groups.values()].map(({ group }) => group);
  }
}

/**
 * Ends the groups a dead worker left listed, as a later worker ends leftovers: each is checked
 * first (`checkRecorded`: never a group whose leader's pid now names a process with another start
 * time), then those verified get SIGTERM, one grace for all (`graceMs`), and SIGKILL
 * (`terminateGroups`). Resolves with how each went, by pgid. Never rejects.
 */
export async function endWatched(
  groups: readonly WatchedGroup[],
  graceMs: number,
): Promise<Map<number, GroupEnding>> {
  const here = hostIdentity();
  const checks = checkRecorded(groups.map((group) => ({ ...here, ...group })));
  const endings = new Map<number, GroupEnding>();
  const toEnd: number[] = [];
  groups.forEach(({ pgid }, i) => {
    const check = checks[i];
    if (check === 'signal') toEnd.push(pgid);
    else if (check !== undefined) endings.set(pgid, check);
  });
  for (const [pgid, ending] of await terminateGroups(toEnd, { graceMs })) endings.set(pgid, ending);
  return endings;
}
