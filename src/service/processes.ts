import type { Runtime } from '../runtime/context.js';
import type { ProcessRecord } from '../store/processes.js';

/**
 * The process `id` (spec §5: status, trigger origin, exit code, output tails) when it belongs to
 * `project` of `tenant`; undefined when there is none there, so another project's process is
 * indistinguishable from a missing one. (Stopping one is `stopProcess` in runs.ts.)
 */
export async function getProcess(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  id: string,
): Promise<ProcessRecord | undefined> {
  const found = await rt.repos.processes.get(id);
  return found === undefined || found.tenant !== tenant || found.project !== project ? undefined : found;
}
