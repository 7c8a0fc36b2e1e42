import { positive, usageError } from '../bench/lib/args.mjs';
import { DEFAULT_SERVER } from './postgres.mjs';

export const USAGE = `usage: npm run soak -- [--minutes N] [--store sqlite|postgres] [--schedulers N] [--seed N]
                        [--db postgres://…] [--workers N] [--keep]
  --minutes N      how long the faults go on, in minutes (default 1; fractions allowed)
  --store S        sqlite (default): two worker processes, each on its own file with half the
                   schedulers: one killed and restarted, one steady; postgres: --workers workers
                   on one fresh database, one steady, the others killed and restarted
  --schedulers N   schedulers in all (default 1000)
  --seed N         the seed of the fault pattern and the engine's behaviour (default: random, printed)
  --db URL         the PostgreSQL server to create the fresh database on (implies --store postgres;
                   default ${DEFAULT_SERVER})
  --workers N      worker processes on PostgreSQL, 2-8 (default 3)
  --keep           keep the store, logs, engine entries and marks (their place is printed); kept anyway
                   on failure
faults, at random every 2-8 s: SIGKILL and SIGTERM of a worker, SIGKILL and crashes at fault points,
  a worker's event loop stalled past its lease (6-12 s); PostgreSQL only: its connections terminated,
  and one worker's connections cut for 3-12 s (each worker reaches the server through its own proxy
  on 127.0.0.1; on SQLite a worker is its file's one serving process, so there is no cut)
the store is accounted, and so are the processes from the marks the shell runs leave: 0 duplicates,
  0 unaccounted occurrences, 0 overlapping runs of an overlap: skip scheduler, none left alive`;

const FLAGS = ['--minutes', '--store', '--schedulers', '--seed', '--db', '--workers', '--keep', '--help'];

/** `--flag value` or `--flag=value` pairs → options; throws a usage error naming the flag. */
export function parseArgs(argv) {
  const given = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.split(/=(.*)/s);
    if (!FLAGS.includes(flag))
      throw usageError(
        arg.startsWith('--') ? `unknown option ${flag}` : `unexpected argument ${JSON.stringify(arg)}`,
      );
    if (given.has(flag)) throw usageError(`${flag} given twice`);
    if (flag === '--keep' || flag === '--help') {
      if (inline !== undefined) throw usageError(`${flag} takes no value`);
      given.set(flag, true);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || (inline === undefined && value.startsWith('--')))
      throw usageError(`${flag}: expected a value`);
    given.set(flag, value);
  }
  if (given.has('--help')) return { help: true };

  const options = {
    minutes: 1,
    store: 'sqlite',
    schedulers: 1000,
    seed: Math.floor(Math.random() * 2 ** 31),
    db: DEFAULT_SERVER,
    workers: 3,
    keep: given.has('--keep'),
  };
  if (given.has('--minutes')) {
    const n = Number(given.get('--minutes'));
    if (!Number.isFinite(n) || n <= 0 || n > 24 * 60)
      throw usageError('--minutes: expected a number of minutes > 0 and at most 1440');
    options.minutes = n;
  }
  if (given.has('--store')) {
    const store = given.get('--store');
    if (store !== 'sqlite' && store !== 'postgres') throw usageError('--store: expected sqlite or postgres');
    options.store = store;
  }
  if (given.has('--db')) {
    const db = given.get('--db');
    if (!/^postgres(ql)?:\/\//.test(db)) throw usageError('--db: expected a postgres:// URL');
    if (given.get('--store') === 'sqlite')
      throw usageError('--db names a PostgreSQL server: not with --store sqlite');
    options.db = db;
    options.store = 'postgres';
  }
  if (given.has('--schedulers')) {
    options.schedulers = positive('--schedulers', given.get('--schedulers'));
    if (options.schedulers < 40 || options.schedulers > 100_000)
      throw usageError('--schedulers: expected 40 to 100000 (each store gets every kind of scheduler)');
  }
  if (given.has('--seed')) {
    const n = Number(given.get('--seed'));
    if (!Number.isInteger(n) || n < 0 || n >= 2 ** 32)
      throw usageError('--seed: expected a whole number 0 to 2^32-1');
    options.seed = n;
  }
  if (given.has('--workers')) {
    if (options.store !== 'postgres')
      throw usageError('--workers: only with --store postgres (SQLite serves one process)');
    options.workers = positive('--workers', given.get('--workers'));
    if (options.workers < 2 || options.workers > 8) throw usageError('--workers: expected 2 to 8');
  }
  return options;
}
