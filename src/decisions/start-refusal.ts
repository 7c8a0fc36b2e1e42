import type { SchedulerTarget } from '../scheduler/definition.js';

/** What decides whether a run's target can start at all, before anything is started. */
export interface StartFacts {
  /** Whether workflow runs may start (operator setting `workflows`; decisions §2). */
  readonly workflowsEnabled: boolean;
  /** The engine of a recipe target's resolved recipe, and whether this worker has it registered. */
  readonly engine?: { readonly name: string; readonly registered: boolean } | undefined;
}

/**
 * Why a run of `target` is refused before it starts (spec §4.2, §10a), or undefined when it can
 * start: a workflow target while workflows are switched off, or a recipe whose engine is not
 * registered here. The reason is user-facing text.
 */
export function startRefusal(target: SchedulerTarget, facts: StartFacts): string | undefined {
  if (target.kind === 'workflow')
    return facts.workflowsEnabled
      ? undefined
      : 'workflows are switched off by the operator (workflows: false)';
  if (facts.engine !== undefined && !facts.engine.registered)
    return `engine ${JSON.stringify(facts.engine.name)} is not registered`;
  return undefined;
}
