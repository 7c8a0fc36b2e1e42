import { describe, expect, it } from 'vitest';
import { diagnose, doctorExitCode } from '../../src/service/doctor/diagnose.js';
import type {
  ConfigFacts,
  DoctorFacts,
  PathFacts,
  RuntimeFacts,
  WorkerFacts,
} from '../../src/service/doctor/facts.js';
import { type Finding, span } from '../../src/service/doctor/finding.js';
import {
  judgeClock,
  judgeOverdue,
  judgeServing,
  judgeWorkers,
  LIVE_WITHIN_MS,
} from '../../src/service/doctor/judge-runtime.js';
import {
  judgeConfig,
  judgePaths,
  judgeStore,
  judgeStrayVariables,
} from '../../src/service/doctor/judge-setup.js';

// issue #26 item 4: `ursa doctor` judges facts it was given at an explicit instant, pure; every
// finding is provoked here once, and on real stores in test/cli/doctor.test.ts.

const NOW = Date.parse('2026-06-01T12:00:00Z');
const MINUTE = 60_000;

const CONFIG: ConfigFacts = {
  valid: true,
  file: { path: '/srv/ursa/ursa.yaml', exists: true },
  fromFile: ['db', 'port'],
  fromEnv: ['URSA_LOG_LEVEL'],
  fromFlags: ['--misfire-threshold'],
  notes: [],
  misfireThresholdMs: MINUTE,
};

const worker = (id: string, ageMs: number, host = 'h1'): WorkerFacts => ({
  id,
  host,
  pid: 100,
  heartbeatAt: NOW - ageMs,
});

const RUNTIME: RuntimeFacts = { workers: [worker('w1', 500)], runsOfLostWorkers: 0, due: [], dueCount: 0 };

/** A healthy PostgreSQL setup: every check passes. */
const HEALTHY: DoctorFacts = {
  config: CONFIG,
  strayVariables: [],
  store: { state: 'open', dialect: 'postgres', location: 'postgres://ursa@db/ursa', pending: [], known: 23 },
  clock: { localBefore: NOW - 4, localAfter: NOW + 4, database: NOW + 100 },
  runtime: RUNTIME,
};

const pick = (findings: Finding[], check: string) => findings.filter((f) => f.check === check);
const severities = (findings: Finding[]) => findings.map((f) => `${f.check}:${f.severity}`);

describe('doctor on a healthy setup', () => {
  it('passes every check, in the order of the checks, and exits 0', () => {
    const findings = diagnose(HEALTHY, NOW);
    expect(severities(findings)).toEqual([
      'config:ok',
      'store:ok',
      'migrations:ok',
      'clock:ok',
      'workers:ok',
      'overdue:ok',
    ]);
    expect(findings[0]?.message).toBe(
      'configuration valid; read: /srv/ursa/ursa.yaml (db, port); environment URSA_LOG_LEVEL; flags --misfire-threshold; defaults for the rest',
    );
    expect(doctorExitCode(findings)).toBe(0);
  });

  it('gives the same findings for the same facts and instant', () => {
    expect(diagnose(HEALTHY, NOW)).toEqual(diagnose(HEALTHY, NOW));
  });
});

describe('configuration sources', () => {
  it('says when there is no ursa.yaml and only defaults are in force', () => {
    const [only] = judgeConfig({
      ...CONFIG,
      file: { path: '/w/ursa.yaml', exists: false },
      fromFile: [],
      fromEnv: [],
      fromFlags: [],
    });
    expect(only).toEqual({
      check: 'config',
      severity: 'ok',
      message: 'configuration valid; read: no /w/ursa.yaml; defaults for the rest',
      fix: null,
    });
  });

  it('names an ursa.yaml that sets nothing', () => {
    const [only] = judgeConfig({ ...CONFIG, fromFile: [], fromEnv: [], fromFlags: [] });
    expect(only?.message).toBe(
      'configuration valid; read: /srv/ursa/ursa.yaml (no settings in it); defaults for the rest',
    );
  });

  it('makes each refused value an error that says where to fix it, and checks nothing that needs the store', () => {
    const facts: DoctorFacts = {
      config: {
        valid: false,
        file: CONFIG.file,
        problems: [
          { field: 'ursa.yaml: port', message: '"0" is out of range; allowed: 1-65535' },
          { field: 'env URSA_MISFIRE_THRESHOLD', message: '"soon" is not a duration' },
          { field: '--db', message: '"" is empty' },
        ],
      },
      strayVariables: [],
    };
    const findings = diagnose(facts, NOW);
    expect(findings.map((f) => [f.severity, f.message, f.fix])).toEqual([
      [
        'error',
        'ursa.yaml: port: "0" is out of range; allowed: 1-65535',
        'correct or remove it in ursa.yaml; ursa config shows the result',
      ],
      [
        'error',
        'env URSA_MISFIRE_THRESHOLD: "soon" is not a duration',
        'correct or unset the variable URSA_MISFIRE_THRESHOLD; ursa config shows the result',
      ],
      ['error', '--db: "" is empty', 'correct the flag --db; ursa config shows the result'],
      ['info', 'the store was not checked: the configuration names no valid store', null],
    ]);
    expect(doctorExitCode(findings)).toBe(1);
  });

  it('warns of a clamped value', () => {
    const findings = judgeConfig({
      ...CONFIG,
      notes: [{ key: 'runLogRetentionDays', note: 'clamped from 400 to 365' }],
    });
    expect(findings[1]).toEqual({
      check: 'config',
      severity: 'warning',
      message: 'runLogRetentionDays: clamped from 400 to 365',
      fix: 'set runLogRetentionDays within its limits (see ursa config --reference)',
    });
  });
});

describe('stray URSA_ variables', () => {
  it('warns of a near miss of a setting with the name it likely is, and notes any other', () => {
    expect(
      judgeStrayVariables([
        { name: 'URSA_MISFIRE_TRESHOLD', closest: 'URSA_MISFIRE_THRESHOLD' },
        { name: 'URSA_WHATEVER', closest: null },
      ]).map((f) => [f.severity, f.message, f.fix]),
    ).toEqual([
      [
        'warning',
        'URSA_MISFIRE_TRESHOLD is set but Ursa reads no such variable: it has no effect',
        'did you mean URSA_MISFIRE_THRESHOLD? rename it',
      ],
      ['info', 'URSA_WHATEVER is set but Ursa reads no such variable: it has no effect', null],
    ]);
  });
});

describe('the store', () => {
  it('warns of a SQLite file that is not there yet (a wrong path is the usual cause)', () => {
    const [only] = judgeStore({ state: 'missing', dialect: 'sqlite', location: '/w/data/ursa.db' });
    expect(only?.severity).toBe('warning');
    expect(only?.message).toBe(
      'no SQLite store at /w/data/ursa.db yet: the first ursa serve (or ursa migrate) creates it there',
    );
    expect(only?.fix).toContain('--db, URSA_DB or db: in ursa.yaml');
  });

  it('makes an unreachable store an error with its code, and a fix for its dialect', () => {
    const [pg] = judgeStore({
      state: 'unreachable',
      dialect: 'postgres',
      location: 'postgres://ursa@db/ursa',
      message: 'store: postgres://ursa@db/ursa: cannot reach the database (ECONNREFUSED)',
      code: 'STORE_UNAVAILABLE',
    });
    expect(pg).toMatchObject({
      severity: 'error',
      message: 'store: postgres://ursa@db/ursa: cannot reach the database (ECONNREFUSED) [STORE_UNAVAILABLE]',
    });
    expect(pg?.fix).toMatch(/^check that the PostgreSQL server runs/);
    const [sqlite] = judgeStore({
      state: 'unreachable',
      dialect: 'sqlite',
      location: '/w/x.db',
      message: 'm',
      code: 'STORE_UNAVAILABLE',
    });
    expect(sqlite?.fix).toMatch(
      /^check that \/w\/x\.db is an Ursa store, readable and writable by this user/,
    );
  });

  it('makes pending migrations an error whose fix is ursa migrate, and skips the worker checks', () => {
    const facts: DoctorFacts = {
      config: CONFIG,
      strayVariables: [],
      store: {
        state: 'open',
        dialect: 'sqlite',
        location: '/w/ursa.db',
        pending: ['0022-a', '0023-b'],
        known: 23,
      },
      clock: null,
    };
    const findings = diagnose(facts, NOW);
    expect(pick(findings, 'migrations')).toEqual([
      {
        check: 'migrations',
        severity: 'error',
        message:
          '2 migrations pending: 0022-a, 0023-b; the workers of this version would apply them as they start',
        fix: 'run ursa migrate (with the same --db) before starting the workers',
      },
    ]);
    expect(pick(findings, 'workers')).toEqual([
      {
        check: 'workers',
        severity: 'info',
        message: 'workers, leases and overdue schedulers were not checked: the store is not migrated',
        fix: null,
      },
    ]);
    expect(doctorExitCode(findings)).toBe(1);
  });
  it('says a store without any migration has no Ursa schema yet, without listing them all', () => {
    const findings = judgeStore({
      state: 'open',
      dialect: 'postgres',
      location: 'postgres://ursa@db/other',
      pending: ['0001-a', '0002-b'],
      known: 2,
    });
    expect(findings[1]).toEqual({
      check: 'migrations',
      severity: 'error',
      message: 'no Ursa schema in this store yet (all 2 migrations pending)',
      fix: 'if this is the store you meant, run ursa migrate (with the same --db) to create the schema; else name the right one',
    });
  });
});

describe('SQLite file permissions', () => {
  const entry = (path: string, kind: PathFacts['kind'], mode: number, usable = true): PathFacts => ({
    path,
    kind,
    mode,
    ownerUid: 1000,
    usable,
  });

  it('passes owner-only modes, naming them', () => {
    const findings = judgePaths({
      uid: 1000,
      entries: [entry('/w', 'folder', 0o700), entry('/w/ursa.db', 'file', 0o600)],
    });
    expect(findings).toEqual([
      {
        check: 'permissions',
        severity: 'ok',
        message: 'store folder and files are owner-only: /w 0700, /w/ursa.db 0600',
        fix: null,
      },
    ]);
  });

  it.each([
    [0o666, 'error', 'writable by every user and readable by every user (mode 0666)'],
    [0o620, 'warning', 'writable by its group (mode 0620)'],
    [0o644, 'warning', 'readable by every user (mode 0644)'],
    [0o640, 'warning', 'readable by its group (mode 0640)'],
  ])('a store file of mode %o is a%s finding with the chmod that fixes it', (mode, severity, text) => {
    const [only] = judgePaths({ uid: 1000, entries: [entry('/w/ursa.db', 'file', mode)] });
    expect(only).toEqual({
      check: 'permissions',
      severity,
      message: `store file /w/ursa.db is ${text}; it holds token hashes and run output`,
      fix: 'chmod 600 /w/ursa.db',
    });
  });

  it.each([
    [0o777, 'error'],
    [0o1777, 'error'],
    [0o770, 'warning'],
    [0o755, 'warning'],
    [0o711, 'warning'],
  ])('a store folder of mode %o is a %s finding fixed by chmod 700', (mode, severity) => {
    const [only] = judgePaths({ uid: 1000, entries: [entry('/w', 'folder', mode)] });
    expect(only?.severity).toBe(severity);
    expect(only?.fix).toBe('chmod 700 /w');
  });

  it('makes a file this user cannot write an error naming both users', () => {
    const [only] = judgePaths({ uid: 1001, entries: [entry('/w/ursa.db', 'file', 0o600, false)] });
    expect(only).toEqual({
      check: 'permissions',
      severity: 'error',
      message:
        'store file /w/ursa.db is not readable and writable by this user (uid 1001; owner uid 1000, mode 0600)',
      fix: "run Ursa as its owner, or give it to Ursa's user: chown <user> /w/ursa.db",
    });
  });

  it('says nothing when no path of the store exists', () => {
    expect(judgePaths({ uid: 1000, entries: [] })).toEqual([]);
  });
});

describe('the clock against the database server', () => {
  const clock = (skewMs: number, roundTripMs = 0) => ({
    localBefore: NOW + skewMs - roundTripMs / 2,
    localAfter: NOW + skewMs + roundTripMs / 2,
    database: NOW,
  });

  it('is info on SQLite, which has no server clock', () => {
    expect(judgeClock(null, MINUTE)).toEqual([
      {
        check: 'clock',
        severity: 'info',
        message:
          "SQLite has no server clock to compare with: the store's instants are this machine's clock; keep it synchronised (NTP)",
        fix: null,
      },
    ]);
  });

  it('passes a skew within the takeover margin', () => {
    expect(judgeClock(clock(1_500), MINUTE)[0]?.severity).toBe('ok');
  });

  it('warns of a skew beyond the takeover margin but within the misfire threshold', () => {
    const [only] = judgeClock(clock(-5_000), MINUTE);
    expect(only?.severity).toBe('warning');
    expect(only?.message).toBe(
      "this machine's clock reads 5 s behind the database server's, more than the 2 s workers allow between their clocks: a live worker may be taken for lost",
    );
  });

  it('makes a skew beyond the misfire threshold an error, either way', () => {
    const [ahead] = judgeClock(clock(3 * MINUTE), MINUTE);
    expect(ahead).toMatchObject({
      severity: 'error',
      message:
        "this machine's clock reads 3 min ahead of the database server's, more than the misfire threshold (1 min): occurrences would be judged missed or fire late",
    });
    expect(ahead?.fix).toContain('NTP');
    expect(judgeClock(clock(-61_000), MINUTE)[0]?.severity).toBe('error');
  });

  it("does not count the query's own round trip as skew", () => {
    // 61 s off, but the query took 4 s: it may be 59 s, within the threshold.
    expect(judgeClock(clock(61_000, 4_000), MINUTE)[0]?.severity).toBe('warning');
  });
});

describe('a SQLite store serving process', () => {
  const holder = { workerId: 'w1', host: 'h1', pid: 100, heartbeatAt: NOW - 500, stoppedAt: null };

  it('is not judged on PostgreSQL', () => {
    expect(judgeServing(RUNTIME, NOW)).toEqual([]);
  });

  it('names the live serving process as info', () => {
    const [only] = judgeServing({ ...RUNTIME, holder }, NOW);
    expect(only?.severity).toBe('info');
    expect(only?.message).toBe(
      'served by worker w1 (host h1, pid 100, lease renewed 2026-06-01T11:59:59.500Z, 500 ms ago); a second ursa serve or ursa worker on it is refused',
    );
  });

  it('passes a store no process serves, or whose holder stopped or lapsed', () => {
    expect(judgeServing({ ...RUNTIME, workers: [], holder: null }, NOW)[0]?.severity).toBe('ok');
    expect(
      judgeServing({ ...RUNTIME, workers: [], holder: { ...holder, stoppedAt: NOW - 10 } }, NOW)[0]?.severity,
    ).toBe('ok');
    expect(
      judgeServing(
        { ...RUNTIME, workers: [], holder: { ...holder, heartbeatAt: NOW - LIVE_WITHIN_MS - 1 } },
        NOW,
      )[0]?.severity,
    ).toBe('ok');
  });

  it('makes a second live process on the file an error', () => {
    const [only] = judgeServing(
      { ...RUNTIME, holder, workers: [worker('w1', 500), worker('w2', 800, 'h2')] },
      NOW,
    );
    expect(only?.severity).toBe('error');
    expect(only?.message).toMatch(
      /^2 processes hold live leases on this SQLite store, which serves one: worker w1 .*; worker w2 \(host h2/,
    );
    expect(only?.fix).toBe(
      'stop all but one; for several workers move the store to PostgreSQL (ursa store copy)',
    );
  });
});

describe('workers and their leases', () => {
  it('lists the live workers', () => {
    const [only] = judgeWorkers({ ...RUNTIME, workers: [worker('w1', 500), worker('w2', 6_900)] }, NOW);
    expect(only?.severity).toBe('ok');
    expect(only?.message).toMatch(/^2 workers live: worker w1 .*; worker w2 /);
  });

  it('warns that nothing fires when no worker is live', () => {
    expect(judgeWorkers({ ...RUNTIME, workers: [] }, NOW)).toEqual([
      {
        check: 'workers',
        severity: 'warning',
        message: 'no worker is running: no scheduler fires until one runs',
        fix: 'start one: ursa serve (with the REST API) or ursa worker',
      },
    ]);
  });

  it('warns of a lapsed worker and its runs while no live worker takes them over', () => {
    const findings = judgeWorkers(
      { ...RUNTIME, workers: [worker('dead', 10 * MINUTE)], runsOfLostWorkers: 3 },
      NOW,
    );
    expect(findings.map((f) => f.severity)).toEqual(['warning', 'warning', 'warning']);
    expect(findings[1]?.message).toBe(
      'worker dead (host h1, pid 100, lease renewed 2026-06-01T11:50:00Z, 10 min ago) was not stopped and its lease lapsed: it died or stalled',
    );
    expect(findings[1]?.fix).toBe(
      'start one: ursa serve (with the REST API) or ursa worker; it ends or adopts the runs that worker held',
    );
    expect(findings[2]?.message).toBe(
      '3 runs are held by workers that are no longer live; they end as worker-lost, or are adopted, when a live worker reaps them',
    );
  });

  it('notes a lapsed worker as info while a live one reaps its runs', () => {
    const findings = judgeWorkers(
      { ...RUNTIME, workers: [worker('w1', 500), worker('dead', LIVE_WITHIN_MS + 1)], runsOfLostWorkers: 1 },
      NOW,
    );
    expect(findings.map((f) => f.severity)).toEqual(['ok', 'info', 'info']);
    expect(findings[2]?.message).toMatch(/^1 run is held by workers/);
  });
});

describe('overdue schedulers', () => {
  const due = (name: string, agoMs: number) => ({
    tenant: 'acme',
    project: 'ops',
    name,
    nextRunAt: NOW - agoMs,
  });

  it('passes next runs past by no more than the misfire threshold', () => {
    const [only] = judgeOverdue(
      { ...RUNTIME, workers: [], due: [due('a', MINUTE)], dueCount: 1 },
      NOW,
      MINUTE,
    );
    expect(only?.severity).toBe('ok');
  });

  it('warns of next runs past by more than the threshold while no worker runs, naming them', () => {
    const [only] = judgeOverdue(
      {
        ...RUNTIME,
        workers: [worker('dead', 20 * MINUTE)],
        due: [due('nightly', 3 * 3_600_000), due('hourly', 2 * MINUTE)],
        dueCount: 2,
      },
      NOW,
      MINUTE,
    );
    expect(only).toEqual({
      check: 'overdue',
      severity: 'warning',
      message:
        '2 schedulers are overdue, as no worker is running: acme/ops/nightly (next run 2026-06-01T09:00:00Z, 3 h ago); acme/ops/hourly (next run 2026-06-01T11:58:00Z, 2 min ago)',
      fix: 'start one: ursa serve (with the REST API) or ursa worker',
    });
  });

  it('counts the ones it does not name', () => {
    const names = Array.from({ length: 10 }, (_, i) => due(`s${i}`, 5 * MINUTE));
    const [only] = judgeOverdue({ ...RUNTIME, workers: [], due: names, dueCount: 25 }, NOW, MINUTE);
    expect(only?.message).toMatch(
      /^25 schedulers are overdue, .*acme\/ops\/s9 \(next run .*\); and 15 more$/,
    );
  });

  it('makes a next run late by more than the threshold while a worker is live an error', () => {
    const [only] = judgeOverdue({ ...RUNTIME, due: [due('hourly', 5 * MINUTE)], dueCount: 1 }, NOW, MINUTE);
    expect(only?.severity).toBe('error');
    expect(only?.message).toMatch(
      /^1 scheduler's next run is late by more than the misfire threshold while a worker is live: acme\/ops\/hourly/,
    );
  });
});

describe('spans in messages', () => {
  it.each([
    [400, '400 ms'],
    [5_000, '5 s'],
    [-90_000, '1 min 30 s'],
    [3 * 3_600_000 + 60_000, '3 h 1 min'],
    [2 * 86_400_000, '2 d'],
  ])('%d ms reads %s', (ms, text) => {
    expect(span(ms)).toBe(text);
  });
});
