import type { SecretHosts } from '../net/secret-hosts.js';

/**
 * The validated operator settings as the rest of Ursa reads them: the {@link Settings} type, the
 * name of each setting and the log levels. What each value may be, and where it is set, is in
 * `schema.ts`; `load.ts` reads the sources.
 */

/** Log levels, most to least severe, as pino names them; `silent` logs nothing. */
export const LogLevel = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
  silent: 'silent',
} as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

/** The validated operator settings. Durations are whole milliseconds. */
export interface Settings {
  /**
   * Store (decisions §5): a SQLite file path (relative to the working directory) or a
   * `postgres://` / `postgresql://` URL. Default `./data/ursa.db`.
   */
  readonly db: string;
  /** Default `info`. */
  readonly logLevel: LogLevel;
  /**
   * Misfire threshold (decisions §4), milliseconds, > 0: with `misfire: skip`, a due instant older
   * than this is not run. Default 60 000 (PT60S).
   */
  readonly misfireThresholdMs: number;
  /**
   * Operator fallback of `scheduler.log.retentionDays` (decisions §2, spec §9a), whole days:
   * > 0 keep run logs that many days (at most 365; larger values are clamped), 0 keep them
   * forever, < 0 write no run-log documents. Default 7.
   */
  readonly runLogRetentionDays: number;
  /** Operator fallback of `scheduler.budget.runsPerHour`: runs a project may start in a rolling hour; 0 none. Default 0. */
  readonly budgetRunsPerHour: number;
  /** Operator fallback of `scheduler.budget.runsPerDay`: runs a project may start in a rolling day; 0 none. Default 0. */
  readonly budgetRunsPerDay: number;
  /** How long a stopping worker waits for running processes, milliseconds, ≥ 0. Default 30 000 (PT30S). */
  readonly shutdownGraceMs: number;
  /** Whether scheduler documents may target workflow runs (decisions §2). Default true. */
  readonly workflows: boolean;
  /** Longest workflow template (one param string), characters, ≥ 1. Default 8 192. */
  readonly templateParseLimit: number;
  /** Render time of one workflow step's templates, milliseconds, ≥ 1. Default 20 (PT0.02S). */
  readonly templateRenderLimitMs: number;
  /** Characters and list elements one workflow step's templates may allocate, ≥ 1. Default 250 000. */
  readonly templateMemoryLimit: number;
  /** Longest list a template filter may be given, elements, ≥ 1. Default 2 000. */
  readonly templateListLimit: number;
  /** Largest rendered workflow param, bytes of UTF-8, ≥ 1. Default 65 536. */
  readonly templateParamLimit: number;
  /** Largest sum of one workflow run's rendered params, bytes of UTF-8, ≥ 1. Default 1 048 576. */
  readonly templateRunLimit: number;
  /** Address the HTTP server listens on. Default `127.0.0.1`. */
  readonly host: string;
  /** Port the HTTP server listens on, 1-65535. Default 8080. */
  readonly port: number;
  /** Tenant the CLI uses when a command names none. Default `default`. */
  readonly tenant: string;
  /** Project the CLI uses when a command names none. Default `demo`. */
  readonly project: string;
  /**
   * Where the `http` engine may connect (issue #19): host patterns and address ranges; when not
   * empty, only these. Default empty (anywhere but the denied).
   */
  readonly outboundAllow: readonly string[];
  /** Where the `http` engine may never connect: host patterns and address ranges. Default empty. */
  readonly outboundDeny: readonly string[];
  /**
   * The hosts each secret variable may be sent to: `URSA_SECRET_…` name → host patterns. A
   * variable not named may go to any host. Default none.
   */
  readonly secretHosts: SecretHosts;
  /**
   * Where agent services call this server back (issue #25): an absolute http(s) URL without a
   * trailing `/`, e.g. `https://ursa.example.com`; empty for none, and then agent recipes are
   * refused when written. Default empty.
   */
  readonly publicUrl: string;
}

/** The name of one setting, as a key of {@link Settings}. */
export type SettingKey = keyof Settings;
