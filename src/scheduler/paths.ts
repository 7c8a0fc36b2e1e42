import { UrsaError } from '../errors/index.js';
import { validateName } from './name.js';

/** Where scheduler documents live in a project or in `_tenant` (spec §1, §3). */
export const SCHEDULER_PREFIX = '_vance/scheduler/';

const SUFFIX = '.yaml';

/**
 * The document path of a scheduler: `_vance/scheduler/<name>.yaml` (spec §1).
 *
 * @throws UrsaError `NAME_INVALID` when `name` breaks the name rule (decisions §6).
 */
export function schedulerPath(name: string): string {
  return `${SCHEDULER_PREFIX}${validateName(name, 'scheduler name')}${SUFFIX}`;
}

/**
 * The scheduler name a document path stands for: the path after {@link SCHEDULER_PREFIX} without
 * its `.yaml` (spec §1: "the filename without `.yaml` is the Scheduler name"). The name is NOT
 * checked here, so listing a prefix never throws for one odd document; `validateName` (and every
 * scheduler parser) refuses a bad one, e.g. `sub/x` from `_vance/scheduler/sub/x.yaml`.
 *
 * @throws UrsaError `ARGUMENT_INVALID` when `path` does not start with {@link SCHEDULER_PREFIX}.
 */
export function schedulerNameFromPath(path: string): string {
  if (!path.startsWith(SCHEDULER_PREFIX)) {
    throw new UrsaError('ARGUMENT_INVALID', `${JSON.stringify(path)} is not under ${SCHEDULER_PREFIX}`, {
      field: 'path',
      value: path,
      allowed: `${SCHEDULER_PREFIX}<name>.yaml`,
    });
  }
  const file = path.slice(SCHEDULER_PREFIX.length);
  return file.endsWith(SUFFIX) ? file.slice(0, -SUFFIX.length) : file;
}
