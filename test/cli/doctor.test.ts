import { execFile } from 'node:child_process';
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATION_NAMES, openStore, repositories, type Store } from '../../src/store/index.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import type { StoreDialect } from '../../src/store/open.js';
import { type CliRun, ursa } from '../support/cli.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { claimedRunRow } from '../support/runs.js';
import { BIN } from '../support/server.js';
import { tempDir } from '../support/temp.js';

// issue #26 item 4: `ursa doctor` on real SQLite and PostgreSQL stores: every finding provoked,
// its fix printed, `--json`, and the exit code (1 on an error, 0 with warnings).

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

interface Finding {
  check: string;
  severity: string;
  message: string;
  fix: string | null;
}
interface Report {
  ok: boolean;
  checkedAt: string;
  counts: Record<string, number>;
  findings: Finding[];
}

/**
 * The instant the tests run at. PostgreSQL's clock is the machine's, so a store test there reads
 * the real time (the skew test moves it); SQLite has no server clock.
 */
const realNow = () => new Date().toISOString();

async function doctor(
  db: string,
  options: { now?: string; args?: string[]; env?: Record<string, string>; cwd?: string } = {},
): Promise<{ run: CliRun; report: Report }> {
  const run = await ursa(['doctor', '--db', db, '--json', ...(options.args ?? [])], {
    now: options.now ?? realNow(),
    cwd: options.cwd ?? tempDir('ursa-doctor-'),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  return { run, report: JSON.parse(run.stdout) as Report };
}

/** The built CLI with `args`, as root, in a mount namespace where `folder` is read-only. */
function readOnly(folder: string, args: readonly string[]): Promise<CliRun> {
  const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
  return new Promise((done) => {
    execFile(
      'unshare',
      ['--mount', 'sh', '-c', script, 'sh', folder, process.execPath, BIN, ...args],
      { cwd: tempDir('ursa-doctor-'), timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        done({ code, stdout, stderr });
      },
    );
  });
}

const of = (report: Report, check: string) => report.findings.filter((f) => f.check === check);
const severities = (report: Report) => report.findings.map((f) => `${f.check}:${f.severity}`);

/** A fresh store of `dialect` with one hourly scheduler `acme/ops/hourly`, applied at `now`. */
async function storeWithScheduler(dialect: StoreDialect, now: string): Promise<string> {
  database = await freshDatabase(dialect);
  const dir = projectFolder({ '_vance/scheduler/hourly.yaml': cronScheduler('0 0 * * * *', 'noop') });
  const applied = await ursa(
    ['apply', dir, '--db', database.location, '--tenant', 'acme', '--project', 'ops'],
    {
      now,
    },
  );
  expect(applied.code, applied.stderr).toBe(0);
  return database.location;
}

async function withStore<T>(location: string, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(location, { migrate: false });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

describe.each(DIALECTS)('ursa doctor on %s', (dialect) => {
  it('passes a fresh store with a scheduler but warns that no worker runs; exit 0', async () => {
    const db = await storeWithScheduler(dialect, realNow());
    const { run, report } = await doctor(db);
    expect(run.code, run.stdout).toBe(0);
    expect(report.ok).toBe(true);
    expect(severities(report)).toEqual([
      'config:ok',
      'store:ok',
      'migrations:ok',
      ...(dialect === 'sqlite' ? ['permissions:ok', 'clock:info', 'serving:ok'] : ['clock:ok']),
      'workers:warning',
      'overdue:ok',
    ]);
    expect(of(report, 'migrations')[0]?.message).toBe(
      `schema up to date (${MIGRATION_NAMES.length} migrations)`,
    );
    expect(of(report, 'workers')[0]?.fix).toBe('start one: ursa serve (with the REST API) or ursa worker');
  });

  it('makes a pending migration an error naming it, with ursa migrate as the fix; exit 1', async () => {
    database = await freshDatabase(dialect);
    const store = await openStore(database.location, { migrate: false });
    try {
      const before = MIGRATION_NAMES[MIGRATION_NAMES.length - 2] as string;
      const { error } = await new Migrator({ db: store.db, provider: migrationsFor(dialect) }).migrateTo(
        before,
      );
      expect(error).toBeUndefined();
    } finally {
      await store.close();
    }
    const { run, report } = await doctor(database.location);
    expect(run.code).toBe(1);
    expect(report.ok).toBe(false);
    expect(of(report, 'migrations')).toEqual([
      {
        check: 'migrations',
        severity: 'error',
        message: `1 migration pending: ${MIGRATION_NAMES[MIGRATION_NAMES.length - 1]}; the workers of this version would apply them as they start`,
        fix: 'run ursa migrate (with the same --db) before starting the workers',
      },
    ]);
    // The doctor changed nothing: the migration is still pending.
    expect((await ursa(['migrate', '--db', database.location, '--dry-run', '--json'])).stdout).toContain(
      MIGRATION_NAMES[MIGRATION_NAMES.length - 1],
    );
  });

  it('warns of schedulers overdue by more than the misfire threshold while no worker runs, naming them', async () => {
    // Applied three hours ago: its next run, on the hour after, is two to three hours past.
    const applied = Date.now() - 3 * 3_600_000;
    const db = await storeWithScheduler(dialect, new Date(applied).toISOString());
    const next = new Date((Math.floor(applied / 3_600_000) + 1) * 3_600_000)
      .toISOString()
      .replace('.000Z', 'Z');
    const { run, report } = await doctor(db);
    expect(run.code).toBe(0);
    expect(of(report, 'overdue')).toEqual([
      {
        check: 'overdue',
        severity: 'warning',
        message: expect.stringMatching(
          new RegExp(
            `^1 scheduler is overdue, as no worker is running: acme/ops/hourly \\(next run ${next}, 2 h( \\d+ min)? ago\\)$`,
          ),
        ),
        fix: 'start one: ursa serve (with the REST API) or ursa worker',
      },
    ]);
    // Past by no more than the threshold, it is not reported.
    const within = await doctor(db, { now: new Date(Date.parse(next) + 30_000).toISOString() });
    expect(of(within.report, 'overdue')[0]?.severity).toBe('ok');
  });

  it('makes a next run late while a worker holds a live lease an error; exit 1', async () => {
    const db = await storeWithScheduler(dialect, new Date(Date.now() - 3 * 3_600_000).toISOString());
    // A live worker that claims nothing (a stalled loop): registered with a fresh heartbeat.
    await withStore(db, (store) =>
      repositories(store).workers.register({ id: 'wrk_stuck', host: 'h1', pid: 4242, startedAt: Date.now() }),
    );
    const { run, report } = await doctor(db);
    expect(run.code).toBe(1);
    expect(of(report, 'overdue')[0]).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(
        /^1 scheduler's next run is late by more than the misfire threshold while a worker is live: acme\/ops\/hourly /,
      ),
    });
    expect(of(report, 'workers')[0]?.message).toMatch(
      /^1 worker live: worker wrk_stuck \(host h1, pid 4242, /,
    );
  });

  it('warns of a worker whose lease lapsed and of the runs it held while no worker is live', async () => {
    const now = realNow();
    const db = await storeWithScheduler(dialect, now);
    const at = Date.parse(now);
    await withStore(db, async (store) => {
      const repos = repositories(store);
      await repos.workers.register({ id: 'wrk_test', host: 'h1', pid: 4242, startedAt: at - 3_600_000 });
      await store.db
        .insertInto('runs')
        .values(claimedRunRow({ tenant: 'acme', project: 'ops', name: 'hourly' }, 'run_lost', at - 3_600_000))
        .execute();
    });
    const { run, report } = await doctor(db);
    expect(run.code).toBe(0);
    expect(of(report, 'workers').map((f) => [f.severity, f.message])).toEqual([
      ['warning', 'no worker is running: no scheduler fires until one runs'],
      [
        'warning',
        expect.stringMatching(
          /^worker wrk_test \(host h1, pid 4242, lease renewed .*, 1 h ago\) was not stopped and its lease lapsed: it died or stalled$/,
        ),
      ],
      [
        'warning',
        '1 run is held by workers that are no longer live; they end as worker-lost, or are adopted, when a live worker reaps them',
      ],
    ]);
  });
});

describe('ursa doctor and the configuration', () => {
  it('makes each invalid value an error naming its source, checks no store, exit 1', async () => {
    const cwd = tempDir('ursa-doctor-');
    writeFileSync(join(cwd, 'ursa.yaml'), 'port: 0\nshutdownGrase: PT10S\n');
    const run = await ursa(['doctor', '--json'], { cwd, env: { URSA_MISFIRE_THRESHOLD: 'soon' } });
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as Report;
    const prefixes = [
      'ursa.yaml: shutdownGrase: ',
      'ursa.yaml: port: ',
      'env URSA_MISFIRE_THRESHOLD: ',
      'the store was not checked',
    ];
    expect(
      report.findings.map((f, i) => [f.check, f.severity, f.message.startsWith(prefixes[i] ?? '?')]),
    ).toEqual([
      ['config', 'error', true],
      ['config', 'error', true],
      ['config', 'error', true],
      ['store', 'info', true],
    ]);
    expect(report.findings[0]?.message).toContain('did you mean shutdownGrace?');
    expect(report.findings[1]?.fix).toBe('correct or remove it in ursa.yaml; ursa config shows the result');
    // No store was created.
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('names the sources it read, and warns of a URSA_ variable that is a near miss of a setting', async () => {
    database = await freshDatabase('sqlite');
    const cwd = dirname(database.location);
    writeFileSync(join(cwd, 'ursa.yaml'), 'port: 9000\n');
    expect((await ursa(['migrate', '--db', database.location])).code).toBe(0);
    const { report } = await doctor('ursa.db', {
      cwd,
      env: {
        URSA_LOG_LEVEL: 'warn',
        URSA_RUN_LOG_RETENTION_DAYS: '400',
        URSA_MISFIRE_TRESHOLD: 'PT5M',
        URSA_TOKEN: 'x',
      },
      args: ['--shutdown-grace', 'PT10S'],
    });
    expect(of(report, 'config')).toEqual([
      {
        check: 'config',
        severity: 'ok',
        message: `configuration valid; read: ${join(cwd, 'ursa.yaml')} (port); environment URSA_LOG_LEVEL, URSA_RUN_LOG_RETENTION_DAYS; flags --db --shutdown-grace; defaults for the rest`,
        fix: null,
      },
      {
        check: 'config',
        severity: 'warning',
        message: expect.stringMatching(/^runLogRetentionDays: clamped from 400 to 365/),
        fix: 'set runLogRetentionDays within its limits (see ursa config --reference)',
      },
    ]);
    expect(of(report, 'environment')).toEqual([
      {
        check: 'environment',
        severity: 'warning',
        message: 'URSA_MISFIRE_TRESHOLD is set but Ursa reads no such variable: it has no effect',
        fix: 'did you mean URSA_MISFIRE_THRESHOLD? rename it',
      },
    ]);
  });
});

describe('ursa doctor on SQLite only', () => {
  it('warns of a store file that is not there, and creates none', async () => {
    database = await freshDatabase('sqlite');
    const { run, report } = await doctor(database.location);
    expect(run.code).toBe(0);
    expect(of(report, 'store')[0]).toMatchObject({
      severity: 'warning',
      message: `no SQLite store at ${database.location} yet: the first ursa serve (or ursa migrate) creates it there`,
    });
    expect(existsSync(database.location)).toBe(false);
  });

  it('makes a file that is not an Ursa store an error with STORE_UNAVAILABLE; exit 1', async () => {
    database = await freshDatabase('sqlite');
    writeFileSync(database.location, 'these are notes, not a database\n'.repeat(200), { mode: 0o600 });
    const { run, report } = await doctor(database.location);
    expect(run.code).toBe(1);
    expect(of(report, 'store')[0]).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(new RegExp(`^store: ${database.location}: .*\\[STORE_UNAVAILABLE\\]$`)),
      fix: expect.stringMatching(/is an Ursa store, readable and writable by this user/),
    });
  });

  // root may write any file of a writable file system: as root, the built CLI runs in a mount
  // namespace of its own where the store's folder is a read-only bind mount (EROFS for root too).
  it('makes a store file this user cannot write an error; exit 1', async () => {
    database = await freshDatabase('sqlite');
    const db = database.location;
    expect((await ursa(['migrate', '--db', db])).code).toBe(0);
    chmodSync(db, 0o400);
    const args = ['doctor', '--db', db, '--json'];
    const run = process.getuid?.() === 0 ? await readOnly(dirname(db), args) : (await doctor(db)).run;
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as Report;
    const messages = of(report, 'permissions').map((f) => f.message);
    expect(messages).toContainEqual(
      expect.stringMatching(/^store file .* is not readable and writable by this user/),
    );
  });

  it('makes a file every user may write an error and one others may read a warning, each with its chmod', async () => {
    database = await freshDatabase('sqlite');
    const db = database.location;
    expect((await ursa(['migrate', '--db', db])).code).toBe(0);
    chmodSync(db, 0o666);
    const open = await doctor(db);
    expect(open.run.code).toBe(1);
    expect(of(open.report, 'permissions')).toEqual([
      {
        check: 'permissions',
        severity: 'error',
        message: `store file ${db} is writable by every user and readable by every user (mode 0666); it holds token hashes and run output`,
        fix: `chmod 600 ${db}`,
      },
    ]);
    chmodSync(db, 0o644);
    chmodSync(dirname(db), 0o755);
    const readable = await doctor(db);
    expect(readable.run.code).toBe(0);
    expect(of(readable.report, 'permissions').map((f) => [f.severity, f.fix])).toEqual([
      ['warning', `chmod 700 ${dirname(db)}`],
      ['warning', `chmod 600 ${db}`],
    ]);
    // The doctor changed no mode.
    expect(statSync(db).mode & 0o777).toBe(0o644);
  });

  it('names the process that serves the store, and makes a second live one an error; exit 1', async () => {
    const now = '2026-06-01T08:30:00Z';
    const db = await storeWithScheduler('sqlite', now);
    const at = Date.parse(now);
    await withStore(db, (store) =>
      repositories(store).owner.take({ id: 'wrk_a', host: 'h1', pid: 11 }, at, 5_000),
    );
    const served = await doctor(db, { now });
    expect(served.run.code).toBe(0);
    expect(of(served.report, 'serving')).toEqual([
      {
        check: 'serving',
        severity: 'info',
        message:
          'served by worker wrk_a (host h1, pid 11, lease renewed 2026-06-01T08:30:00Z, 0 ms ago); a second ursa serve or ursa worker on it is refused',
        fix: null,
      },
    ]);
    await withStore(db, (store) =>
      repositories(store).workers.register({ id: 'wrk_b', host: 'h2', pid: 12, startedAt: at }),
    );
    const twice = await doctor(db, { now });
    expect(twice.run.code).toBe(1);
    expect(of(twice.report, 'serving')[0]).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(
        /^2 processes hold live leases on this SQLite store, which serves one: /,
      ),
      fix: 'stop all but one; for several workers move the store to PostgreSQL (ursa store copy)',
    });
  });

  it('prints each finding with its fix and a tally, without --json', async () => {
    database = await freshDatabase('sqlite');
    const db = database.location;
    expect((await ursa(['migrate', '--db', db])).code).toBe(0);
    chmodSync(db, 0o646);
    const run = await ursa(['doctor', '--db', db], { cwd: tempDir('ursa-doctor-') });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `error    permissions  store file ${db} is writable by every user and readable by every user (mode 0646); it holds token hashes and run output\n${' '.repeat(22)}fix: chmod 600 ${db}\n`,
    );
    expect(run.stdout).toMatch(/^ok {7}config {7}configuration valid; /);
    expect(run.stdout).toMatch(/\n1 error, 1 warning, 1 info\n$/);
  });
});

describe('ursa doctor on PostgreSQL only', () => {
  it("makes this machine's clock off the database server's by more than the misfire threshold an error; exit 1", async () => {
    const now = realNow();
    const db = await storeWithScheduler('postgres', now);
    const ahead = new Date(Date.parse(now) + 10 * 60_000).toISOString();
    const skewed = await doctor(db, { now: ahead });
    expect(skewed.run.code).toBe(1);
    expect(of(skewed.report, 'clock')).toEqual([
      {
        check: 'clock',
        severity: 'error',
        message: expect.stringMatching(
          /^this machine's clock reads (9 min \d+ s|10 min) ahead of the database server's, more than the misfire threshold \(1 min\): /,
        ),
        fix: 'synchronise the clocks of this machine and the database server (NTP: chrony, systemd-timesyncd)',
      },
    ]);
    // Within a longer threshold the same skew is a warning (workers compare clocks too): exit 0.
    const tolerated = await doctor(db, { now: ahead, args: ['--misfire-threshold', 'PT1H'] });
    expect(of(tolerated.report, 'clock')[0]?.severity).toBe('warning');
    expect(tolerated.run.code).toBe(0);
    const behind = await doctor(db, { now: new Date(Date.parse(now) - 10 * 60_000).toISOString() });
    expect(of(behind.report, 'clock')[0]?.message).toMatch(/ behind the database server's/);
  });

  it("says a database without Ursa's schema has none yet, and changes nothing; exit 1", async () => {
    database = await freshDatabase('postgres');
    const { run, report } = await doctor(database.location);
    expect(run.code).toBe(1);
    expect(of(report, 'migrations')[0]).toMatchObject({
      severity: 'error',
      message: `no Ursa schema in this store yet (all ${MIGRATION_NAMES.length} migrations pending)`,
    });
    const again = await doctor(database.location);
    expect(of(again.report, 'migrations')[0]?.message).toBe(of(report, 'migrations')[0]?.message);
  });

  it('makes a server that does not answer an error with STORE_UNAVAILABLE; exit 1', async () => {
    const { run, report } = await doctor('postgres://ursa:secret@127.0.0.1:1/nothing');
    expect(run.code).toBe(1);
    const [store] = of(report, 'store');
    expect(store?.severity).toBe('error');
    expect(store?.message).toMatch(/\[STORE_UNAVAILABLE\]$/);
    expect(store?.message).not.toContain('secret');
    expect(store?.fix).toMatch(/^check that the PostgreSQL server runs/);
  });
});
