import { identifyGroup } from '../processes/process-group.js';
import { Batcher } from '../runtime/batcher.js';
import type { Runtime } from '../runtime/context.js';
import { type Backoff, persistRecord } from '../runtime/record-retry.js';
import type { ProcessGroupRecord } from '../store/process-groups.js';
import type { RunningGroup, RunningGroups } from './running-groups.js';

/**
 * Keeps the store's record of a worker's process groups (table `process_groups`, decisions §5
 * fencing) in step with its {@link RunningGroups}: a group is recorded as soon as its engine
 * reports it — host, boot id, pid namespace and the leader's start time, read at once, while the
 * leader cannot have been reaped — and its row is deleted once the run's engine returned. A later
 * worker on the same host ends what a dead worker's rows name (`endLeftoverGroups`).
 *
 * Writes of one turn of the event loop go together (one statement each), and a write the store
 * refuses is retried by `retry`, as a run's own records are. A group's delete waits for its
 * insert. A group whose insert never succeeded (retries spent, or {@link stop}) is not recorded:
 * like one that ran in the moment between its spawn and its write, it is found after a crash
 * only through its run's process id (see `endLeftoverGroups`).
 */
export class GroupRecords {
  readonly #inserts: Batcher<ProcessGroupRecord, void>;
  readonly #deletes: Batcher<string, void>;
  // Each recorded group's insert, by process id, until its delete is queued.
  readonly #recorded = new Map<string, Promise<boolean>>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #stopped = new AbortController();
  readonly #unsubscribe: () => void;

  constructor(
    private readonly rt: Runtime,
    private readonly workerId: string,
    groups: RunningGroups,
    private readonly retry: Backoff,
  ) {
    this.#inserts = new Batcher<ProcessGroupRecord, void>(async (rows) => {
      await rt.repos.processGroups.record(rows);
      return rows.map(() => undefined);
    });
    this.#deletes = new Batcher<string, void>(async (ids) => {
      await rt.repos.processGroups.forget([...new Set(ids)]);
      return ids.map(() => undefined);
    });
    this.#unsubscribe = groups.subscribe((change) => {
      if (change.kind === 'added') this.#added(change.group);
      else this.#removed(change.group);
    });
  }

  #added({ processId, pgid }: RunningGroup): void {
    // Synchronously, in the engine's own turn: the leader has not been reaped yet.
    const row: ProcessGroupRecord = {
      ...identifyGroup(pgid),
      processId,
      workerId: this.workerId,
      recordedAt: this.rt.clock.now(),
    };
    const written = this.#persist('the record of a process group', () => this.#inserts.add(row));
    const previous = this.#recorded.get(processId);
    this.#recorded.set(
      processId,
      previous === undefined ? written : Promise.all([previous, written]).then((all) => all.every(Boolean)),
    );
  }

  #removed({ processId }: RunningGroup): void {
    const recorded = this.#recorded.get(processId);
    if (recorded === undefined) return;
    this.#recorded.delete(processId);
    this.#track(
      recorded.then(
        (ok) => ok && this.#persist('the end of a process group', () => this.#deletes.add(processId)),
      ),
    );
  }

  /** Runs `write` until it succeeds, by `retry`; resolves false (after a warning) when it gave up. */
  #persist(what: string, write: () => Promise<void>): Promise<boolean> {
    const task = persistRecord(what, write, {
      backoff: this.retry,
      signal: this.#stopped.signal,
      log: this.rt.log,
    }).then(
      () => true,
      (error: unknown) => {
        this.rt.log.warn({ err: error }, `could not write ${what}; giving up`);
        return false;
      },
    );
    this.#track(task);
    return task;
  }

  #track(task: Promise<unknown>): void {
    const tracked = task.finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  /** Resolves once every write queued so far has been made or given up. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /**
   * Stops following the groups; writes still failing are tried once more and then given up (the
   * worker is stopping: a row left behind is a leftover the next worker finds gone).
   */
  async stop(): Promise<void> {
    this.#unsubscribe();
    this.#stopped.abort();
    await this.settled();
  }
}
