import type { LockMode } from '../scheduler/definition.js';

/**
 * The LLM lock-down of spec §10b, as pure decisions over the cascade-resolved entry's lock mode
 * (undefined: no scheduler of that name). REST, CLI and web do not use it: it protects
 * schedulers from agents, it is not access control.
 */

/** How an agent sees a scheduler: listed (maybe marked locked), or not at all. */
export function agentView(lockMode: LockMode): { visible: boolean; locked: boolean } {
  return { visible: lockMode !== 'hidden', locked: lockMode !== 'full' };
}

/**
 * Whether an agent may create, replace or delete the scheduler whose cascade-resolved entry has
 * `existing` lock mode: only when there is none or it is `full`. A new document may carry any
 * lock mode — `protected` or `hidden` is self-restriction, and raising `full` to `protected` is
 * allowed; lowering is impossible, since a locked entry cannot be written at all.
 *
 * `lastKnown` (when the write would create the project's document): the name's
 * {@link LastKnown} modes. An agent may not create a name that was last hidden in either layer:
 * that would make it visible again and show runs a person hid; only a person can (issue #19).
 */
export function agentMayWrite(existing: LockMode | undefined, lastKnown: LastKnown = []): boolean {
  return (existing === undefined || existing === 'full') && !lastKnown.includes('hidden');
}

/**
 * The lock mode of a scheduler name in each layer of the cascade (the project and `_tenant`): the
 * live document's, else that of the document a person deleted last (undefined: the layer never
 * had one). A name whose last document was hidden stays hidden after its deletion.
 */
export type LastKnown = readonly (LockMode | undefined)[];

/**
 * Whether an agent may see a run (its run log, its feed lines): not when it was hidden when the
 * run was claimed (`recorded`), so deleting the scheduler or making it `full` later never shows a
 * run that was hidden; nor while the name is hidden in either layer ({@link LastKnown}), live or
 * deleted. Both layers count because a run does not record which layer's document ran it: the
 * runs of a hidden `_tenant` scheduler and of a project one put over it share one log folder.
 */
export function agentMaySeeRun(lastKnown: LastKnown, recorded: LockMode): boolean {
  return recorded !== 'hidden' && !lastKnown.includes('hidden');
}
