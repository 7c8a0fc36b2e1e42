/** A process group one of this worker's runs started (see `EngineRequest.spawned`). */
export interface RunningGroup {
  /** The Ursa process (`proc_…`) whose engine started the group. */
  readonly processId: string;
  /** The OS process group id: the pid of its leader. */
  readonly pgid: number;
}

/** What a listener of {@link RunningGroups} is told: a group was started, or its run has ended. */
export type RunningGroupChange =
  | { readonly kind: 'added'; readonly group: RunningGroup }
  | { readonly kind: 'removed'; readonly group: RunningGroup };

/**
 * The process groups this worker's runs and workflow steps have running now (decisions §5
 * fencing): a group is added when an engine reports it and removed once that engine returned
 * (see `EngineCalls`); the store record of each group and the lease watchdog follow these changes.
 */
export class RunningGroups {
  readonly #groups = new Map<string, RunningGroup[]>();
  readonly #listeners = new Set<(change: RunningGroupChange) => void>();

  /** Records a group started for `group.processId`; listeners hear of it synchronously. */
  add(group: RunningGroup): void {
    const groups = this.#groups.get(group.processId) ?? [];
    groups.push(group);
    this.#groups.set(group.processId, groups);
    this.#tell({ kind: 'added', group });
  }

  /** Forgets every group of `processId` (its engine returned); returns them. */
  remove(processId: string): readonly RunningGroup[] {
    const groups = this.#groups.get(processId) ?? [];
    this.#groups.delete(processId);
    for (const group of groups) this.#tell({ kind: 'removed', group });
    return groups;
  }

  // Every listener hears of every change, whatever another one threw (the first error is rethrown
  // after): the store record, the watchdog and the sentinel each must know every group.
  #tell(change: RunningGroupChange): void {
    let failure: { error: unknown } | undefined;
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }

  /** Every group running now. */
  list(): RunningGroup[] {
    return [...this.#groups.values()].flat();
  }

  /** Calls `listener` on every change from now on; returns the function that stops it. */
  subscribe(listener: (change: RunningGroupChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
