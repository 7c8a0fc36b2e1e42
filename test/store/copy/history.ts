import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Insertable } from 'kysely';
import { defaultEngines } from '../../../src/engines/index.js';
import { createLogger } from '../../../src/log.js';
import type { Runtime } from '../../../src/runtime/context.js';
import { Worker } from '../../../src/runtime/worker.js';
import { applyDirectory } from '../../../src/service/apply.js';
import { libraryActor } from '../../../src/store/audit.js';
import { openStore, repositories, type Store } from '../../../src/store/index.js';
import type { RunsTable } from '../../../src/store/schema.js';
import { fixedClock } from '../../../src/time/clock.js';
import { projectFolder, shellRecipe } from '../../support/project.js';
import { TEST_SETTINGS } from '../../support/runtime.js';
import { tempDir } from '../../support/temp.js';
import { until } from '../../support/until.js';

/** A store with history (issue #26), built through the real runtime and a stepped clock. */
export const T = 'acme';
export const P = 'ops';
export const START = Date.parse('2026-06-08T00:00:00Z');
const MINUTE = 60_000;
export const ONE_SHOT_AT = START + 90_000;

/** The project: a per-minute scheduler, a daily one, and a one-shot that marks each execution. */
export function historyProject(marks: string, description = 'every minute'): string {
  return projectFolder({
    '_vance/recipes/noop.yaml': shellRecipe('true'),
    '_vance/recipes/mark.yaml': shellRecipe('echo "$URSA_CORRELATION_ID" >> "$URSA_PARAM_OUT"', {
      out: marks,
    }),
    '_vance/scheduler/minute.yaml': `description: ${description}\ncron: "0 * * * * *"\ntimezone: UTC\nrecipe: noop\n`,
    '_vance/scheduler/daily.yaml': 'description: daily\ncron: "0 0 0 * * *"\ntimezone: UTC\nrecipe: noop\n',
    '_vance/scheduler/once.yaml': `description: once\nat: "${new Date(ONE_SHOT_AT).toISOString()}"\ntimezone: UTC\nrecipe: mark\n`,
  });
}

/** A runtime on the store at `location` with a stepped clock at `now`. */
export async function runtimeAt(
  location: string,
  now: number,
): Promise<{ rt: Runtime; store: Store; clock: ReturnType<typeof fixedClock> }> {
  const store = await openStore(location);
  const clock = fixedClock(now);
  const rt: Runtime = {
    repos: repositories(store),
    clock,
    settings: TEST_SETTINGS,
    engines: defaultEngines(),
    log: createLogger('silent'),
  };
  return { rt, store, clock };
}

/** Steps `worker` through `minutes` minute boundaries after `from`, each tick settled. */
export async function tickMinutes(
  clock: ReturnType<typeof fixedClock>,
  worker: Worker,
  from: number,
  minutes: number,
): Promise<void> {
  for (let i = 1; i <= minutes; i++) {
    clock.set(from + i * MINUTE);
    await worker.tick();
    await worker.executor.settled();
  }
}

/** The correlation ids the one-shot's process wrote, one per execution. */
export function executions(marks: string): string[] {
  return existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean) : [];
}

/** The source of a live copy: its worker still runs (see {@link buildHistory}). */
export interface LiveHistory {
  /** Where the one-shot's process marks each execution. */
  readonly marks: string;
  /** Opens the gate of the `lane` runs, lets the worker settle and stop, and closes the store. */
  finish(): Promise<void>;
}

/** When the `lane` run in flight was claimed and the next one queued, UTC ms (minutes 4 and 5). */
export const LANE_IN_FLIGHT = START + 4 * MINUTE;
export const LANE_QUEUED = START + 5 * MINUTE;

/**
 * Builds the history at `location`: a week of per-minute runs before {@link START} with their
 * feed lines (inserted in batches: ticking 10,080 times is too slow), three minutes of the real
 * worker (the one-shot fires), an archived version, inbox items, a token and a setting; then a
 * `lane` scheduler (overlap `queue`) whose minute-4 run waits on a gate and whose minute-5 run is
 * queued behind it, with the worker still running at minute 5: a live store to copy.
 */
export async function buildHistory(location: string): Promise<LiveHistory> {
  const folder = tempDir('ursa-copy-marks-');
  const marks = join(folder, 'marks');
  const gate = join(folder, 'gate');
  const { rt, store, clock } = await runtimeAt(location, START);
  const worker = new Worker(rt, { acquireAheadMs: 0 });
  try {
    await applyDirectory(rt, historyProject(marks, 'every minute, first'), T, P, libraryActor('alice'));
    await applyDirectory(rt, historyProject(marks), T, P, libraryActor('alice'));
    await insertWeek(store);
    await worker.bootstrap();
    await tickMinutes(clock, worker, START, 3);
    for (const [user, kind] of [
      ['alice', 'run-failed'],
      ['bob', 'document-invalid'],
    ] as const)
      await rt.repos.inbox.add({ tenant: T, user, kind, title: kind, body: 'body', createdAt: clock.now() });
    await rt.repos.tokens.create({ tenant: T, role: 'admin', user: 'alice', label: 'ci' }, clock.now());
    await rt.repos.settings.set(
      { tenant: T, scope: 'tenant', subject: '', key: 'feed.retentionDays', value: '30' },
      clock.now(),
    );
    await applyDirectory(rt, laneProject(gate), T, P, libraryActor('alice'));
    clock.set(LANE_IN_FLIGHT);
    await worker.tick();
    // Its next occurrence is claimed once this run started (a worker claims none beside its own
    // run waiting to start), and queued behind it.
    await until(async () => (await laneRuns(store))[0]?.[1] === 'started', 'the lane run started');
    clock.set(LANE_QUEUED);
    await worker.tick();
    await until(
      async () =>
        JSON.stringify((await laneRuns(store)).map((r) => r.slice(0, 2))) ===
        JSON.stringify([
          [LANE_IN_FLIGHT, 'started'],
          [LANE_QUEUED, 'queued'],
        ]),
      'one lane run in flight and one queued',
    );
    // Its lease renewed at the stepped clock's now (the renewal timer runs on the wall clock).
    await rt.repos.workers.heartbeat(worker.id, clock.now());
  } catch (error) {
    writeFileSync(gate, '');
    await worker.stop();
    await store.close();
    throw error;
  }
  return {
    marks,
    finish: async () => {
      writeFileSync(gate, '');
      await worker.executor.settled();
      await worker.stop();
      await store.close();
    },
  };
}

/** 10,080 ended per-minute runs of the week before {@link START}, each with START and END lines. */
async function insertWeek(store: Store): Promise<void> {
  const minutes = 7 * 24 * 60;
  for (let first = 0; first < minutes; first += 500) {
    const runs = [];
    const feed = [];
    for (let i = first; i < Math.min(first + 500, minutes); i++) {
      const at = START - (minutes - i) * MINUTE;
      const id = `run_week_${String(i).padStart(5, '0')}`;
      runs.push(runRow(id, at, { fencing_token: i + 1 }));
      for (const kind of ['START', 'END'])
        feed.push({
          tenant: T,
          project: P,
          at,
          kind,
          ref_type: 'SCHEDULER',
          ref_id: 'minute',
          trace_id: id,
          outcome: kind === 'END' ? 'completed' : 'pending',
          log_path: null,
          payload: '{}',
        });
    }
    await store.db.insertInto('runs').values(runs).execute();
    await store.db.insertInto('feed').values(feed).execute();
  }
}

/** A row of `runs`: an ended, completed run of `minute` at `at` (UTC ms), with `changes` over it. */
export function runRow(
  id: string,
  at: number,
  changes: Partial<Insertable<RunsTable>> = {},
): Insertable<RunsTable> {
  return {
    correlation_id: id,
    tenant: T,
    project: P,
    name: 'minute',
    scheduled_for: at,
    trigger: 'cron',
    coalesced: 0,
    coalesced_until: null,
    claimed_at: at,
    state: 'ended',
    outcome: 'completed',
    reason: null,
    run_as: 'alice',
    session_id: null,
    process_id: null,
    log_path: `_vance/logs/minute/${id}.md`,
    started_at: at,
    ended_at: at + 1000,
    worker_id: null,
    lock_mode: 'full',
    attempt: 1,
    fencing_token: null,
    queued_at: null,
    waiting_behind: null,
    folded_into: null,
    ...changes,
  };
}

/** A project's `lane`: every minute, overlap `queue`, each run waiting until `gate` exists. */
function laneProject(gate: string): string {
  return projectFolder({
    '_vance/recipes/gated.yaml': shellRecipe('while [ ! -e "$URSA_PARAM_GATE" ]; do sleep 0.02; done', {
      gate,
    }),
    '_vance/scheduler/lane.yaml':
      'description: lane\ncron: "0 * * * * *"\ntimezone: UTC\nrecipe: gated\noverlap: queue\n',
  });
}

/** The `lane` runs of a store: [scheduled for (UTC ms), state, outcome, reason], in occurrence order. */
export async function laneRuns(store: Store): Promise<[number, string, string, string | null][]> {
  const rows = await store.db
    .selectFrom('runs')
    .select(['scheduled_for', 'state', 'outcome', 'reason'])
    .where('name', '=', 'lane')
    .orderBy('scheduled_for')
    .execute();
  return rows.map((r) => [Number(r.scheduled_for), r.state, r.outcome, r.reason]);
}
