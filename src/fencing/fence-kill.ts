import { signalGroup } from '../processes/process-group.js';
import type { RunningGroups } from './running-groups.js';

/**
 * The SIGKILL of the main thread's self-fence (decisions §5 fencing): `graceMs` (the fence's
 * grace) after the runs were stopped — each engine's stop sent its SIGTERM — every process group
 * that ran then and is still tracked gets SIGKILL from here. So the main thread alone ends them
 * before the lease expires, whatever grace an engine gives a stop of its own (the shell engine's
 * `killGraceMs`, 2 s by default, is longer than the fence leaves).
 *
 * A group is signalled only while it is tracked, that is until its engine returned, and Linux
 * gives out no pid that is still some process's group id; see SECURITY.md "Fencing" for the limit.
 * The timer never keeps the process alive.
 */
export function killAfterGrace(groups: RunningGroups, graceMs: number): void {
  const fenced = groups.list();
  if (fenced.length === 0) return;
  const timer = setTimeout(() => {
    const tracked = new Set(groups.list().map(({ processId, pgid }) => `${processId} ${pgid}`));
    for (const { processId, pgid } of fenced)
      if (tracked.has(`${processId} ${pgid}`)) signalGroup(pgid, 'SIGKILL');
  }, graceMs);
  timer.unref();
}
