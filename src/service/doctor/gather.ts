import { accessSync, constants, existsSync, type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { sql } from 'kysely';
import { CONFIG_FILE, type Config, type ConfigOverrides, loadConfig } from '../../config/load.js';
import { settingDefinitions, settingKeys } from '../../config/schema.js';
import { closestName } from '../../errors/did-you-mean.js';
import { UrsaError } from '../../errors/index.js';
import {
  isPostgresUrl,
  MIGRATION_NAMES,
  openStore,
  pendingMigrations,
  redactUrl,
  repositories,
  type Store,
} from '../../store/index.js';
import { heldByDead, leaseLiveness } from '../../store/liveness.js';
import type { Clock } from '../../time/clock.js';
import type {
  ClockFacts,
  ConfigFacts,
  DoctorFacts,
  PathFacts,
  RuntimeFacts,
  StoreFacts,
  StrayVariable,
} from './facts.js';
import { LIVE_WITHIN_MS } from './judge-runtime.js';

/**
 * The imperative shell of `ursa doctor` (issue #26 item 4): reads the configuration sources, the
 * environment, a SQLite store's files, the store and the clocks into {@link DoctorFacts}, and
 * changes nothing — a store is opened without migrating it, and a SQLite file that does not exist
 * is not created.
 */

/** What the gatherer reads from. */
export interface GatherInput {
  /** Where `ursa.yaml` is looked for and a relative SQLite path starts. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The command's configuration flags. */
  readonly overrides: ConfigOverrides;
  readonly clock: Clock;
}

/** `URSA_*` names Ursa reads or sets that are not settings: the CLI's server and token, a run's environment. */
const OTHER_VARIABLES = new Set([
  'URSA_URL',
  'URSA_TOKEN',
  'URSA_SCHEDULER',
  'URSA_CORRELATION_ID',
  'URSA_FENCING_TOKEN',
  'URSA_ATTEMPT',
  'URSA_SCHEDULED_FOR',
  'URSA_PROCESS_ID',
  'URSA_RUN_AS',
]);
/** Prefixes of variables named by their users: secrets, a run's params, the test suite's. */
const OTHER_PREFIXES = ['URSA_SECRET_', 'URSA_PARAM_', 'URSA_TEST_'];

const SETTING_VARIABLES: readonly string[] = settingKeys.map((key) => settingDefinitions[key].env);

/** The `URSA_*` variables of `env` that nothing reads, each with the setting's variable it is closest to. */
export function strayVariables(env: Readonly<Record<string, string | undefined>>): StrayVariable[] {
  return Object.keys(env)
    .filter(
      (name) =>
        name.startsWith('URSA_') &&
        env[name] !== undefined &&
        !SETTING_VARIABLES.includes(name) &&
        !OTHER_VARIABLES.has(name) &&
        !OTHER_PREFIXES.some((prefix) => name.startsWith(prefix)),
    )
    .sort()
    .map((name) => ({ name, closest: closestName(name, SETTING_VARIABLES) }));
}

function configFacts(input: GatherInput): { facts: ConfigFacts; config?: Config } {
  const file = { path: resolve(input.cwd, CONFIG_FILE), exists: existsSync(resolve(input.cwd, CONFIG_FILE)) };
  let config: Config;
  try {
    config = loadConfig({ cwd: input.cwd, env: input.env, overrides: input.overrides });
  } catch (error) {
    if (!(error instanceof UrsaError) || error.code !== 'CONFIG_INVALID') throw error;
    const problems = error.issues?.map((i) => ({ field: i.path, message: i.message })) ?? [
      { field: error.field ?? 'configuration', message: error.message },
    ];
    return { facts: { valid: false, file, problems } };
  }
  const from = (prefix: string) => settingKeys.filter((key) => config.sources[key].startsWith(prefix));
  return {
    config,
    facts: {
      valid: true,
      file,
      fromFile: settingKeys
        .filter((key) => config.sources[key] === CONFIG_FILE)
        .map((k) => settingDefinitions[k].yamlKey),
      fromEnv: from('env ').map((k) => settingDefinitions[k].env),
      fromFlags: from('flag ').map((k) => settingDefinitions[k].flag),
      notes: settingKeys.flatMap((key) => {
        const note = config.notes[key];
        return note === undefined ? [] : [{ key: settingDefinitions[key].yamlKey, note }];
      }),
      misfireThresholdMs: config.misfireThresholdMs,
    },
  };
}

/** `stat` and `access` of one path, or undefined when it does not exist. */
function pathFacts(path: string, kind: PathFacts['kind']): PathFacts | undefined {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  let usable = true;
  try {
    accessSync(path, constants.R_OK | constants.W_OK | (kind === 'folder' ? constants.X_OK : 0));
  } catch {
    usable = false;
  }
  return { path, kind, mode: stat.mode & 0o7777, ownerUid: stat.uid, usable };
}

/** A SQLite store's folder and the files of it that exist. */
function sqlitePaths(file: string): { uid: number; entries: PathFacts[] } {
  const entries = [
    pathFacts(dirname(file), 'folder'),
    ...[file, `${file}-wal`, `${file}-shm`].map((path) => pathFacts(path, 'file')),
  ].filter((entry) => entry !== undefined);
  return { uid: process.getuid?.() ?? -1, entries };
}

/** The database's clock between two readings of this process's (PostgreSQL; null on SQLite). */
async function clockFacts(store: Store, clock: Clock): Promise<ClockFacts | null> {
  if (store.dialect !== 'postgres') return null;
  const localBefore = clock.now();
  const result = await sql<{ ms: number | string }>`select extract(epoch from now()) * 1000 as ms`.execute(
    store.db,
  );
  const localAfter = clock.now();
  return { localBefore, localAfter, database: Number(result.rows[0]?.ms) };
}

/** How many due schedulers the facts name one by one. */
const DUE_NAMED = 10;

async function runtimeFacts(store: Store, now: number, misfireThresholdMs: number): Promise<RuntimeFacts> {
  const { db } = store;
  const workers = await db
    .selectFrom('workers')
    .select(['id', 'host', 'pid', 'heartbeat_at'])
    .where('stopped_at', 'is', null)
    .orderBy('heartbeat_at', 'desc')
    .limit(100)
    .execute();
  const lost = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('state', 'in', ['claimed', 'queued', 'started'])
    .where('worker_id', 'is not', null)
    .where(heldByDead('runs.worker_id', leaseLiveness(now, LIVE_WITHIN_MS)))
    .executeTakeFirst();
  const cutoff = now - misfireThresholdMs;
  const due = db
    .selectFrom('schedule_state')
    .where('next_run_at', 'is not', null)
    .where('next_run_at', '<', cutoff);
  const dueRows = await due
    .select(['tenant', 'project', 'name', 'next_run_at'])
    .orderBy('next_run_at')
    .limit(DUE_NAMED)
    .execute();
  const dueCount = await due.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  const holder =
    store.dialect === 'sqlite' ? ((await repositories(store).owner.holder()) ?? null) : undefined;
  return {
    ...(holder === undefined ? {} : { holder }),
    workers: workers.map((w) => ({
      id: w.id,
      host: w.host,
      pid: Number(w.pid),
      heartbeatAt: Number(w.heartbeat_at),
    })),
    runsOfLostWorkers: Number(lost?.n ?? 0),
    due: dueRows.map((d) => ({
      tenant: d.tenant,
      project: d.project,
      name: d.name,
      nextRunAt: Number(d.next_run_at),
    })),
    dueCount: Number(dueCount?.n ?? 0),
  };
}

/**
 * Reads everything `ursa doctor` judges. Errors of the store become facts (`unreachable`); a
 * failure after the store was reached (a query refused) propagates.
 *
 * @throws UrsaError the store's errors once it was reached (`STORE_BUSY`, `STORE_UNAVAILABLE`).
 */
export async function gatherFacts(input: GatherInput): Promise<DoctorFacts> {
  const { facts: config, config: loaded } = configFacts(input);
  const stray = strayVariables(input.env);
  if (loaded === undefined) return { config, strayVariables: stray };
  const postgres = isPostgresUrl(loaded.db);
  const location = postgres ? loaded.db : resolve(input.cwd, loaded.db);
  const shown = postgres ? redactUrl(location) : location;
  const paths = postgres ? undefined : sqlitePaths(location);
  const base = { config, strayVariables: stray, ...(paths === undefined ? {} : { paths }) };
  if (!postgres && !existsSync(location)) {
    return { ...base, store: { state: 'missing', dialect: 'sqlite', location: shown } };
  }
  let store: Store;
  try {
    store = await openStore(location, { migrate: false });
  } catch (error) {
    const facts: StoreFacts = {
      state: 'unreachable',
      dialect: postgres ? 'postgres' : 'sqlite',
      location: shown,
      message: error instanceof UrsaError ? error.message : `store: ${shown}: cannot be opened`,
      code: error instanceof UrsaError ? error.code : 'STORE_UNAVAILABLE',
    };
    return { ...base, store: facts };
  }
  try {
    const pending = await pendingMigrations(store);
    const facts: StoreFacts = {
      state: 'open',
      dialect: store.dialect,
      location: store.location,
      pending,
      known: MIGRATION_NAMES.length,
    };
    const clock = await clockFacts(store, input.clock);
    if (pending.length > 0) return { ...base, store: facts, clock };
    const runtime = await runtimeFacts(store, input.clock.now(), loaded.misfireThresholdMs);
    return { ...base, store: facts, clock, runtime };
  } finally {
    await store.close();
  }
}
