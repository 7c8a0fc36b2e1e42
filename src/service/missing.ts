import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { LockMode } from '../scheduler/definition.js';
import { formatInstant } from '../time/instant.js';

/**
 * Why (tenant, project) has no scheduler `name` to show, as the error to throw (issue #23): a
 * one-shot that fired left the scheduler list (spec §10a), so a person asking for it by name is
 * told when it fired, which run it started and where its document lies in the trash
 * (`ONE_SHOT_FIRED`); any other name is `NOT_FOUND`. For people's interfaces only: an agent is
 * never told more than "not found" (a hidden scheduler's fire stays hidden, spec §10b).
 *
 * @throws a store error (the returned error is the answer, not thrown).
 */
export async function schedulerMissing(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  name: string,
): Promise<UrsaError> {
  const [fired] = await rt.repos.projects.fired(tenant, project, { name, limit: 1 });
  if (fired === undefined) {
    return new UrsaError(
      'NOT_FOUND',
      `scheduler ${JSON.stringify(name)} does not exist in ${tenant}/${project}`,
      {
        field: 'name',
        value: name,
      },
    );
  }
  // Restoring it as it was would not run it again: the refresh finds it fired and trashes it anew.
  const where = fired.trashPath === null ? '' : `its document is in the trash at ${fired.trashPath}; `;
  return new UrsaError(
    'ONE_SHOT_FIRED',
    `scheduler ${JSON.stringify(name)} was a one-shot: it fired at ${formatInstant(fired.firedAt)} (run ${fired.correlationId}) and left the list; ${where}to run it again, write it anew with a later at:`,
    { field: 'name', value: name },
  );
}

/**
 * The last fire of one-shot `name` of (tenant, project), when it fired: the instant (UTC ms) and
 * the lock mode its run was claimed with, for an agent's view to decide whether it may be told
 * (issue #23); undefined when no one-shot of that name fired or its run is gone.
 *
 * @throws a store error.
 */
export async function firedOneShot(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  name: string,
): Promise<{ readonly firedAt: number; readonly lockMode: LockMode } | undefined> {
  const [fired] = await rt.repos.projects.fired(tenant, project, { name, limit: 1 });
  const run = fired === undefined ? undefined : await rt.repos.runs.get(fired.correlationId);
  return fired === undefined || run === undefined
    ? undefined
    : { firedAt: fired.firedAt, lockMode: run.lockMode };
}
