import { existsSync, readFileSync } from 'node:fs';
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

/**
 * Builds the history at `location`: a week of per-minute runs before {@link START} with their
 * feed lines (inserted in batches: ticking 10,080 times is too slow), then three minutes of the
 * real worker (the one-shot fires), an archived version, inbox items, a token and a setting.
 */
export async function buildHistory(location: string): Promise<{ marks: string }> {
  const marks = join(tempDir('ursa-copy-marks-'), 'marks');
  const { rt, store, clock } = await runtimeAt(location, START);
  try {
    await applyDirectory(rt, historyProject(marks, 'every minute, first'), T, P, libraryActor('alice'));
    await applyDirectory(rt, historyProject(marks), T, P, libraryActor('alice'));
    await insertWeek(store);
    const worker = new Worker(rt, { acquireAheadMs: 0 });
    await worker.bootstrap();
    await tickMinutes(clock, worker, START, 3);
    await worker.stop();
    await rt.repos.inbox.add({
      tenant: T,
      user: 'alice',
      kind: 'run-failed',
      title: 'a failure',
      body: 'it failed',
      createdAt: clock.now(),
    });
    await rt.repos.inbox.add({
      tenant: T,
      user: 'bob',
      kind: 'document-invalid',
      title: 'bad',
      body: 'bad',
      createdAt: clock.now(),
    });
    await rt.repos.tokens.create({ tenant: T, role: 'admin', user: 'alice', label: 'ci' }, clock.now());
    await rt.repos.settings.set(
      { tenant: T, scope: 'tenant', subject: '', key: 'feed.retentionDays', value: '30' },
      clock.now(),
    );
  } finally {
    await store.close();
  }
  return { marks };
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
