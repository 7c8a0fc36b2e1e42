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
 */
export function agentMayWrite(existing: LockMode | undefined): boolean {
  return existing === undefined || existing === 'full';
}

/**
 * Whether an agent may see a run (its run log, its feed lines): not when its scheduler is hidden
 * now (`now`: the cascade-resolved entry's mode, undefined when there is none), nor when it was
 * hidden when the run was claimed (`recorded`), so deleting the scheduler or making it `full`
 * later never shows a run that was hidden.
 */
export function agentMaySeeRun(now: LockMode | undefined, recorded: LockMode): boolean {
  return now !== 'hidden' && recorded !== 'hidden';
}
