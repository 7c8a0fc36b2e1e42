import { UrsaError } from '../errors/index.js';
import { RUN_LOG_PREFIX } from '../runtime/run-log.js';

/**
 * The errors an agent's tool call gets from its `AgentScope`, worded for the agent: a locked
 * scheduler, a scheduler or run log it may not know of, and a path outside the run logs. A hidden
 * one and one that is not there get the same error (spec §10b).
 */

/**
 * The one error of a write to a locked scheduler. Its wording and details are the same for
 * `protected` and `hidden` (spec §10b accepts that a write to a guessed hidden name reveals that
 * something locked is there, and nothing more): no lock mode, no owner, no source.
 */
export function locked(scheduler: string): UrsaError {
  return new UrsaError(
    'LOCKED',
    `scheduler ${JSON.stringify(scheduler)} is locked: agents cannot change or delete it, and a project scheduler of the same name cannot override it. Choose another name, or ask a person to change it.`,
    { field: 'name', value: scheduler },
  );
}

export function notFound(scheduler: string, project: string): UrsaError {
  return new UrsaError(
    'NOT_FOUND',
    `there is no scheduler ${JSON.stringify(scheduler)} in project ${project}; scheduler_list shows the ones there are`,
    { field: 'name', value: scheduler },
  );
}

export function noRecipe(recipe: string, project: string): UrsaError {
  return new UrsaError(
    'NOT_FOUND',
    `there is no recipe ${JSON.stringify(recipe)} for project ${project}; recipe_list shows the ones there are`,
    { field: 'name', value: recipe },
  );
}

export function noRunLog(path: string): UrsaError {
  return new UrsaError(
    'NOT_FOUND',
    `no run log ${JSON.stringify(path)}; document_list shows the ones there are`,
    { field: 'path', value: path },
  );
}

/** @throws UrsaError `ARGUMENT_INVALID` unless `path` is under {@link RUN_LOG_PREFIX}, without `..`. */
export function checkLogPath(path: string): void {
  if (!path.startsWith(RUN_LOG_PREFIX) || path.includes('..')) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `path: ${JSON.stringify(path)} is not a run log; only documents under ${RUN_LOG_PREFIX} can be read`,
      { field: 'path', value: path, allowed: `a path under ${RUN_LOG_PREFIX}` },
    );
  }
}
