// A worker-like process started inside another process's group (a run's recipe that launches
// `ursa worker` without setsid), for process-group.test.ts (issue #20): it asks every path that
// signals a group to end its own group, and prints what each answered as JSON. Were a path to
// signal the group, this process would die of its SIGTERM before printing. Runs the built code
// (dist/): `npm run build` first.
import { endGroup, terminateGroup, terminateGroups } from '../../dist/processes/group-ending.js';
import { identifyGroup, isOwnGroup, readStat, signalGroup } from '../../dist/processes/process-group.js';

const own = readStat(process.pid)?.pgrp;
const answers = {
  own,
  leader: own === process.pid,
  isOwnGroup: isOwnGroup(own),
  signalGroup: signalGroup(own, 'SIGTERM'),
  terminateGroup: await terminateGroup(own, { graceMs: 100, killWaitMs: 100 }),
  terminateGroups: Object.fromEntries(await terminateGroups([own], { graceMs: 100, killWaitMs: 100 })),
  endGroup: await endGroup(identifyGroup(own), { graceMs: 100, killWaitMs: 100 }),
};
process.stdout.write(`${JSON.stringify(answers)}\n`);
