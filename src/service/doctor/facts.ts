/**
 * What `ursa doctor` looks at (issue #26 item 4), as plain data: the gatherer (`gather.ts`, the
 * imperative shell) reads them from the configuration sources, the file system, the store and the
 * clock; the judges (`diagnose.ts`) turn them into findings, pure. Instants are UTC epoch ms.
 */

/** One refused configuration value: where it was set (`ursa.yaml: port`, `env URSA_PORT`, `--db`) and why. */
export interface ConfigProblem {
  readonly field: string;
  readonly message: string;
}

/** The configuration sources and their verdict. */
export type ConfigFacts =
  | {
      readonly valid: true;
      /** The configuration file looked for (absolute) and whether it exists. */
      readonly file: { readonly path: string; readonly exists: boolean };
      /** `ursa.yaml` key of every setting set in the file, by the order of the settings. */
      readonly fromFile: readonly string[];
      /** The `URSA_*` variables that set a setting. */
      readonly fromEnv: readonly string[];
      /** The flags that set a setting (`--db`). */
      readonly fromFlags: readonly string[];
      /** A value changed after validation, by its `ursa.yaml` key (`clamped from 400 to 365`). */
      readonly notes: readonly { readonly key: string; readonly note: string }[];
      /** The misfire threshold in force, ms: the grace of the clock and overdue checks. */
      readonly misfireThresholdMs: number;
    }
  | {
      readonly valid: false;
      readonly file: { readonly path: string; readonly exists: boolean };
      readonly problems: readonly ConfigProblem[];
    };

/** An `URSA_*` variable of the environment that no setting reads, and the setting's variable it is closest to. */
export interface StrayVariable {
  readonly name: string;
  readonly closest: string | null;
}

/** A path of a SQLite store (its folder, file, write-ahead log, shared memory) as `stat` and `access` see it. */
export interface PathFacts {
  readonly path: string;
  readonly kind: 'folder' | 'file';
  /** The permission bits (`0o600`). */
  readonly mode: number;
  readonly ownerUid: number;
  /** Whether this process may read and write it (`access(R_OK | W_OK)`; a folder also `X_OK`). */
  readonly usable: boolean;
}

/** The store as the configuration names it, and whether it was reached. */
export type StoreFacts =
  | { readonly state: 'missing'; readonly dialect: 'sqlite'; readonly location: string }
  | {
      readonly state: 'unreachable';
      readonly dialect: 'sqlite' | 'postgres';
      readonly location: string;
      /** The store error's message (it names the location, never a password or driver text). */
      readonly message: string;
      readonly code: string;
    }
  | {
      readonly state: 'open';
      readonly dialect: 'sqlite' | 'postgres';
      readonly location: string;
      /** The migrations not yet applied, in order. */
      readonly pending: readonly string[];
      /** How many migrations this Ursa knows. */
      readonly known: number;
    };

/**
 * The clocks read around one query of the database's (PostgreSQL `now()`): this process's
 * clock before and after it, and the database's in between. Null on SQLite, which has no server
 * clock.
 */
export interface ClockFacts {
  readonly localBefore: number;
  readonly localAfter: number;
  readonly database: number;
}

/** A worker the store records as not stopped (live, or lapsed and not yet retired). */
export interface WorkerFacts {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly heartbeatAt: number;
}

/** The process a SQLite store records as its one serving process. */
export interface HolderFacts {
  readonly workerId: string;
  readonly host: string;
  readonly pid: number;
  readonly heartbeatAt: number;
  readonly stoppedAt: number | null;
}

/** A scheduler whose next run is due before the overdue cut-off the gatherer was given. */
export interface DueFacts {
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
  readonly nextRunAt: number;
}

/** What the store holds of its workers and schedules, read once it is reached and migrated. */
export interface RuntimeFacts {
  /** On SQLite: the recorded serving process (null: none); on PostgreSQL undefined. */
  readonly holder?: HolderFacts | null;
  /** The workers not recorded stopped, the most recent heartbeat first. */
  readonly workers: readonly WorkerFacts[];
  /** How many claimed, queued or started runs name a worker that is not live. */
  readonly runsOfLostWorkers: number;
  /** Schedulers due before the cut-off (now less the misfire threshold), the oldest first, a few. */
  readonly due: readonly DueFacts[];
  /** How many schedulers are due before the cut-off in all. */
  readonly dueCount: number;
}

/** Everything `ursa doctor` judges. A part is absent when what it needs could not be read. */
export interface DoctorFacts {
  readonly config: ConfigFacts;
  readonly strayVariables: readonly StrayVariable[];
  /** The store, unless the configuration was invalid. */
  readonly store?: StoreFacts;
  /** SQLite: the folder and each file of the store that exists; this process's user id. */
  readonly paths?: { readonly uid: number; readonly entries: readonly PathFacts[] };
  /** The clocks, once the store is reached: null on SQLite. */
  readonly clock?: ClockFacts | null;
  /** Once the store is reached and migrated. */
  readonly runtime?: RuntimeFacts;
}
