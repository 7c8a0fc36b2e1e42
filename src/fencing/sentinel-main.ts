// The sentinel process of a worker (decisions §5 fencing; the worker's side is `sentinel.ts`):
// `node sentinel-main.js <graceMs> [<pgid>:<ticks> …]`, started detached (a session of its own)
// with a pipe from its worker on standard input and nothing else. It lists the process groups its
// command line names (those running when it was started) and those the worker's messages add and
// remove (see `Watchlist`). When the pipe closes after a goodbye (a clean stop) it exits; when it
// closes without one (the worker died: SIGKILL, an OOM kill, a crash), it ends every group still
// listed (`endWatched`: SIGTERM, the grace, SIGKILL, never a group whose leader's start time
// changed) and exits. It imports only what that needs, to stay small.
import { decodeGroup, endWatched, Watchlist } from './sentinel-list.js';

const [grace, ...running] = process.argv.slice(2);
const graceMs = Number(grace);
const list = new Watchlist();
for (const argument of running) {
  const group = decodeGroup(argument);
  if (group !== undefined) list.apply({ kind: 'added', group });
}
let finished = false;

async function finish(): Promise<void> {
  if (finished) return;
  finished = true;
  if (!list.goodbye) await endWatched(list.groups, Number.isFinite(graceMs) ? graceMs : 1000);
  process.exit(0);
}

// Its life is its worker's: a stop signal meant for a whole group or service (systemd's SIGTERM to
// every process of the unit while the worker drains) must not end it before its worker.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => {});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  list.read(chunk);
  if (list.goodbye) void finish();
});
process.stdin.on('end', () => void finish());
// A pipe that fails is a worker that is gone, as one that closes.
process.stdin.on('error', () => void finish());
