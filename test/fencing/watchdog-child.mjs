// A process with a lease watchdog and nothing else, for watchdog.test.ts (issue #20): it
// publishes one renewal, then blocks its own event loop, or simply ends. Runs the built code
// (dist/): `npm run build` first.
//
// argv[2] is JSON: { mode, fenceAfterMs, graceMs } where `mode` is
//   'blocked-requests'  one engine call in flight that owns no process group, the loop blocked 2 s
//   'blocked-fenced'    the same, but the main thread fenced itself first (it aborted its requests)
//   'idle'              nothing in flight; the process ends without stopping the watchdog

import { RunningGroups } from '../../dist/fencing/running-groups.js';
import { LeaseWatchdog } from '../../dist/fencing/watchdog.js';
import { createLogger } from '../../dist/log.js';
import { busyWait } from '../../dist/runtime/faults.js';

const { mode, fenceAfterMs, graceMs } = JSON.parse(process.argv[2]);
const watchdog = new LeaseWatchdog(new RunningGroups(), {
  fenceAfterMs,
  graceMs,
  workerId: 'wrk_watchdog_child',
  log: createLogger('silent'),
});
watchdog.start(process.hrtime.bigint());
if (mode === 'idle') {
  process.stdout.write('idle\n');
} else {
  watchdog.requests(1);
  if (mode === 'blocked-fenced') watchdog.mainFenced(true);
  // Let the thread come up before the loop blocks (its start needs the loop once).
  setTimeout(() => {
    process.stdout.write('blocking\n');
    busyWait(2_000);
    process.stdout.write('survived\n');
  }, 200);
}
