// A worker process that kills itself with SIGKILL at one exact point (issue #12), for
// process-kill.test.ts: one bootstrap and one pass at a fixed instant, then exit 0 — which the
// test reads as "the point was never reached". Runs the built code (dist/): `npm run build` first.
//
// argv[2] is JSON: { db, now, kill } where `kill` is either
//   { point: 'afterClaim' | 'afterSpawn' | 'afterMarker' | 'beforeEnd' }   a RunFaults point, or
//   { table, nth, when: 'before' | 'after' }   the nth INSERT/UPDATE of `table` through the query
//     builder, or raw INSERT of it: before it runs, or right after it ran (inside its transaction,
//     before the commit);
//   { entered: true }   right after the engines of the first start were entered: the `shell`
//     engine's first run queues the kill behind the code that enters them (issue #20), so every
//     engine entered together has spawned its child, and nothing the worker does after has run.
import { createShellEngine, defaultEngines, EngineRegistry } from '../../dist/engines/index.js';
import { createLogger } from '../../dist/log.js';
import { Worker } from '../../dist/runtime/worker.js';
import { openStore, repositories } from '../../dist/store/index.js';
import { fixedClock } from '../../dist/time/clock.js';

const { db, now, kill } = JSON.parse(process.argv[2]);
const die = () => {
  process.kill(process.pid, 'SIGKILL');
};

// The text of a raw statement as far as it begins: its fragments, with the tables it names and
// the raw statements it nests in their places (as test/support/select-faults.ts reads it).
function rawText(node) {
  if (node.kind === 'TableNode') return node.table.identifier.name;
  if (node.kind !== 'RawNode') return '?';
  return node.sqlFragments
    .map((f, i) => f + (i < node.parameters.length ? rawText(node.parameters[i]) : ''))
    .join('');
}

/** The table an INSERT or UPDATE node writes, if it is one; or a raw INSERT's (the store's bulk inserts). */
function writtenTable(node) {
  if (node.kind === 'RawNode') return /^\s*insert into (\w+)/i.exec(rawText(node))?.[1];
  if (node.kind !== 'InsertQueryNode' && node.kind !== 'UpdateQueryNode') return undefined;
  const table = node.kind === 'InsertQueryNode' ? node.into : node.table;
  return (table?.table ?? table?.node?.table)?.identifier?.name;
}

/** A Kysely plugin that dies at the nth write of `kill.table`, before or after it ran. */
function killer() {
  let seen = 0;
  const marked = new WeakSet();
  return {
    transformQuery({ node, queryId }) {
      if (writtenTable(node) === kill.table && ++seen === kill.nth) {
        if (kill.when === 'before') die();
        marked.add(queryId);
      }
      return node;
    },
    async transformResult({ queryId, result }) {
      if (marked.has(queryId)) die();
      return result;
    },
  };
}

/** The engines: the defaults, or for `entered` a shell engine that dies once its first run was entered. */
function engines() {
  if (kill.entered !== true) return defaultEngines();
  const shell = createShellEngine();
  let armed = false;
  return new EngineRegistry().register({
    name: 'shell',
    run(request) {
      const running = shell.run(request);
      if (!armed) {
        armed = true;
        queueMicrotask(die);
      }
      return running;
    },
  });
}

const opened = await openStore(db);
const store = kill.table === undefined ? opened : { ...opened, db: opened.db.withPlugin(killer()) };
const rt = {
  repos: repositories(store),
  clock: fixedClock(now),
  settings: { misfireThresholdMs: 60_000, runLogRetentionDays: 7, shutdownGraceMs: 1_000 },
  engines: engines(),
  log: createLogger('silent'),
};
const faults = kill.point === undefined ? {} : { [kill.point]: die };
const worker = new Worker(rt, { acquireAheadMs: 0, faults });
await worker.bootstrap();
await worker.tick();
await worker.executor.settled();
await opened.close();
process.exit(0);
