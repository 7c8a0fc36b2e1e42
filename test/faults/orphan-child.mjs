// A worker process for orphans.test.ts (issue #20): one bootstrap and one pass at a fixed
// instant, then it keeps running (its runs with it) until SIGKILL, or stops cleanly on SIGTERM
// and exits 0. Runs the built code (dist/): `npm run build` first.
//
// argv[2] is JSON: { db, now, exclusive, dieBeforeInsertInto? }: with the last, the process
// SIGKILLs itself just before its first INSERT into that table (through the query builder).
import { defaultEngines } from '../../dist/engines/index.js';
import { createLogger } from '../../dist/log.js';
import { Worker } from '../../dist/runtime/worker.js';
import { openStore, repositories } from '../../dist/store/index.js';
import { fixedClock } from '../../dist/time/clock.js';

const { db, now, exclusive, dieBeforeInsertInto } = JSON.parse(process.argv[2]);

/** A Kysely plugin that dies before the first INSERT into `table`. */
function dieBefore(table) {
  return {
    transformQuery({ node }) {
      if (node.kind === 'InsertQueryNode' && node.into?.table?.identifier?.name === table)
        process.kill(process.pid, 'SIGKILL');
      return node;
    },
    async transformResult({ result }) {
      return result;
    },
  };
}

const opened = await openStore(db);
const store =
  dieBeforeInsertInto === undefined
    ? opened
    : { ...opened, db: opened.db.withPlugin(dieBefore(dieBeforeInsertInto)) };
const rt = {
  repos: repositories(store),
  clock: fixedClock(now),
  settings: { misfireThresholdMs: 60_000, runLogRetentionDays: 7, shutdownGraceMs: 500 },
  engines: defaultEngines(),
  log: createLogger('warn', process.stderr),
};
const worker = new Worker(rt, { acquireAheadMs: 0, leaseTtlMs: 5_000, exclusive });
process.once('SIGTERM', async () => {
  await worker.stop();
  await opened.close();
  process.exit(0);
});
await worker.bootstrap();
await worker.tick();
// Alive until the test kills or stops it.
setInterval(() => {}, 60_000);
