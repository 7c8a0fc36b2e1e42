import { validateName } from '../scheduler/name.js';

/** Where workflow documents live in a project or in `_tenant` (decisions §2, issue #10). */
export const WORKFLOW_PREFIX = '_vance/workflows/';

/**
 * The document path of a workflow: `_vance/workflows/<name>.yaml`.
 *
 * @throws UrsaError `NAME_INVALID` when `name` breaks the name rule (decisions §6).
 */
export function workflowPath(name: string): string {
  return `${WORKFLOW_PREFIX}${validateName(name, 'workflow name')}.yaml`;
}
