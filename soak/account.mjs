import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { kindOf, schedulerName } from './project.mjs';

export const TENANT = 'default';
export const PROJECT = 'soak';
const CHUNK = 50;

/** The outcome class of a run row in the report. */
function classOf(row) {
  if (row.outcome === 'failed') {
    const reason = row.reason ?? '';
    if (reason === 'worker-lost' || reason === 'spawn-failed' || reason === 'scheduler-gone')
      return `failed: ${reason}`;
    if (reason.startsWith('timeout')) return 'failed: timeout';
    return 'failed: engine';
  }
  if (row.outcome === 'cancelled') return `cancelled: ${row.reason ?? ''}`;
  return row.outcome;
}

/**
 * Accounts one store after the soak (its workers stopped): every occurrence in [from, to] of its
 * schedulers `indices` must be served exactly once — a run of its own or absorbed by a coalesced
 * run (Ursa's `accountOccurrences`, decisions §4, shared with test/faults/worker-kill.test.ts);
 * none may be left claimed, queued or started, and no process active.
 */
export async function accountStore(dist, { location, indices, from, to }) {
  const load = (path) => import(pathToFileURL(join(dist, path)).href);
  const { openStore, ACTIVE_STATUSES } = await load('store/index.js');
  const { accountOccurrences, occurrencesBetween } = await load('decisions/accounting.js');
  const { parseCron, timeZone } = await load('cron/index.js');
  const store = await openStore(location);
  const result = {
    schedulers: indices.length,
    occurrences: 0,
    runs: 0,
    served: 0,
    absorbed: 0,
    coalescedRuns: 0,
    outcomes: new Map(),
    missing: [],
    doubled: [],
    leftRunning: 0,
    releasedQueued: 0,
    leftByState: new Map(),
    leftExamples: [],
    activeProcesses: 0,
    runsInStore: 0,
  };
  const timings = new Map();
  try {
    for (let c = 0; c < indices.length; c += CHUNK) {
      const chunk = indices.slice(c, c + CHUNK);
      const names = chunk.map(schedulerName);
      const rows = await store.db
        .selectFrom('runs')
        .select([
          'name',
          'scheduled_for',
          'coalesced',
          'coalesced_until',
          'state',
          'outcome',
          'reason',
          'claimed_at',
          'worker_id',
        ])
        .where('tenant', '=', TENANT)
        .where('project', '=', PROJECT)
        .where('name', 'in', names)
        .execute();
      const byName = new Map(names.map((name) => [name, []]));
      for (const row of rows) byName.get(row.name)?.push(row);
      for (const i of chunk) {
        const name = schedulerName(i);
        const kind = kindOf(i);
        const key = `${kind.cron} ${kind.timezone}`;
        if (!timings.has(key))
          timings.set(key, {
            trigger: { kind: 'cron', cron: parseCron(kind.cron) },
            zone: timeZone(kind.timezone),
          });
        const expected = occurrencesBetween(timings.get(key), from, to);
        const mine = byName.get(name);
        const account = accountOccurrences(
          expected,
          mine.map((row) => ({
            scheduledFor: Number(row.scheduled_for),
            coalescedUntil: Number(row.coalesced) === 1 ? Number(row.coalesced_until) : null,
          })),
        );
        result.occurrences += account.expected;
        result.served += account.served;
        result.absorbed += account.absorbed;
        for (const at of account.missing) result.missing.push({ name, at });
        for (const { at, count } of account.doubled) result.doubled.push({ name, at, count });
        for (const row of mine) {
          const at = Number(row.scheduled_for);
          if (at > to) continue;
          // A queued run a clean stop released for the next worker (no worker holds it) waits,
          // as it should: counted on its own, not as left running.
          if (row.state === 'queued' && row.worker_id === null) result.releasedQueued++;
          else if (row.state === 'claimed' || row.state === 'queued' || row.state === 'started') {
            result.leftRunning++;
            result.leftByState.set(row.state, (result.leftByState.get(row.state) ?? 0) + 1);
            if (result.leftExamples.length < 5) result.leftExamples.push({ name, at, ...row });
          }
          if (at < from) continue;
          result.runs++;
          if (Number(row.coalesced) === 1) result.coalescedRuns++;
          const cls = classOf(row);
          result.outcomes.set(cls, (result.outcomes.get(cls) ?? 0) + 1);
        }
      }
    }
    const active = await store.db
      .selectFrom('processes')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', 'in', [...ACTIVE_STATUSES])
      .executeTakeFirstOrThrow();
    result.activeProcesses = Number(active.n);
    const all = await store.db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    result.runsInStore = Number(all.n);
  } finally {
    await store.close();
  }
  return result;
}

/**
 * The engine entries the `soak` engine wrote (one line per call, every incarnation of every
 * worker): an occurrence whose engine was entered more than once is a duplicate even where the
 * store shows one run (a run started twice).
 */
export function accountEntries(files) {
  const seen = new Map();
  let entries = 0;
  let torn = 0;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const [name, at, correlationId] = line.split(' ');
      if (correlationId === undefined || !/^\d+$/.test(at)) {
        torn++; // a line cut by a SIGKILL mid-write
        continue;
      }
      entries++;
      const key = `${name} ${at}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  }
  const duplicates = [];
  for (const [key, count] of seen) {
    if (count > 1) {
      const [name, at] = key.split(' ');
      duplicates.push({ name, at: Number(at), count });
    }
  }
  return { entries, torn, duplicates };
}
