import { UrsaError } from '../errors/index.js';
import { RECIPE_PREFIX } from '../recipes/paths.js';
import { RUN_LOG_PREFIX } from '../runtime/run-log.js';
import { SCHEDULER_PREFIX } from '../scheduler/paths.js';
import { formatInstant } from '../time/instant.js';
import { WORKFLOW_PREFIX } from '../workflows/paths.js';

/**
 * The errors an agent's tool call gets from its `AgentScope`, worded for the agent: a locked
 * scheduler, a scheduler, recipe or document it may not know of, and a path it may not read. A hidden
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

/** A one-shot the agent may know of that fired at `firedAt` (UTC ms) and left the list (issue #23). */
export function oneShotFired(scheduler: string, firedAt: number): UrsaError {
  return new UrsaError(
    'ONE_SHOT_FIRED',
    `scheduler ${JSON.stringify(scheduler)} was a one-shot: it fired at ${formatInstant(firedAt)} and left the list; to run it again, write it anew with scheduler_set and a later at:`,
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

/** The one error of a document the agent may not read or that is not there (the same, spec §10b). */
export function noDocument(path: string): UrsaError {
  const what = path.startsWith(RUN_LOG_PREFIX) ? 'run log' : 'document';
  return new UrsaError(
    'NOT_FOUND',
    `no ${what} ${JSON.stringify(path)}; document_list shows the ones there are`,
    { field: 'path', value: path },
  );
}

/** The `_vance/` folders an agent may read documents of (beside everything outside `_vance/`). */
const READABLE = [RUN_LOG_PREFIX, SCHEDULER_PREFIX, RECIPE_PREFIX, WORKFLOW_PREFIX];

/**
 * Whether `path` lies where an agent may read documents: outside `_vance/`, or in the run logs,
 * scheduler, recipe or workflow folders — whatever documents are there; the run logs and
 * schedulers are filtered further by lock mode.
 */
export function isReadableArea(path: string): boolean {
  return !path.startsWith('_vance/') || READABLE.some((prefix) => path.startsWith(prefix));
}

/**
 * A path `document_read` may be asked for: one in a readable area ({@link isReadableArea}), a
 * shape rule that tells nothing of what is there.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for any other path, or one with `..`.
 */
export function checkDocumentPath(path: string): void {
  if (!isReadableArea(path) || path.includes('..')) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `path: ${JSON.stringify(path)} cannot be read by an agent; readable are documents under ${READABLE.join(', ')} and outside _vance/`,
      { field: 'path', value: path, allowed: `a path under ${READABLE.join(', ')}, or outside _vance/` },
    );
  }
}
