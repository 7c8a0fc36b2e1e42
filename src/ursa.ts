import { resolve } from 'node:path';
import { claimWorker, compose } from './app/compose.js';
import type { Engine, EngineRequest, EngineResult } from './engines/engine.js';
import { defaultEngines, type HttpEngineOptions } from './engines/index.js';
import { UrsaError } from './errors/index.js';
import { createLogger, type Logger } from './log.js';
import type { RecipeDefinition } from './recipes/recipe.js';
import type { Runtime, RuntimeSettings } from './runtime/context.js';
import type { Worker } from './runtime/worker.js';
import { type ApplyEntry, applyDirectory } from './service/apply.js';
import { refreshProjectAs } from './service/refresh.js';
import { type FireResult, fireScheduler, stopProcess } from './service/runs.js';
import { libraryActor, type Repositories } from './store/index.js';
import { type Clock, systemClock } from './time/clock.js';

/** The run's context an engine request carries (see `EngineRequest.context`). */
type EngineContext = EngineRequest['context'];

/**
 * What an engine function is given about the process it runs (spec §4.1): the engine request's
 * context (tenant, project, scheduler, correlation id, `scheduledFor` in UTC epoch ms, `runAs`,
 * fencing token and attempt; see `EngineRequest.context`) with the process and its recipe.
 */
export interface ProcessContext extends EngineContext {
  readonly processId: string;
  readonly recipe: RecipeDefinition;
  /** The recipe's default params with the scheduler's merged over them. */
  readonly params: Readonly<Record<string, unknown>>;
  readonly initialMessage: string | undefined;
  /** Reports a status change while running: `paused`, `blocked`, `suspended`, and back to `running`. */
  report(status: 'running' | 'paused' | 'blocked' | 'suspended'): void;
}

/** What an engine function may return: nothing (done), or details of the end. */
export interface EngineOutcome {
  /** Default `done`. */
  readonly status?: 'done' | 'failed';
  /** Why it failed, for the run log and the feed. */
  readonly reason?: string;
  /** Text for the run log's output section. */
  readonly output?: string;
}

/**
 * An engine as an async function (decisions §2: engines are code). It runs one process to its
 * end; `signal` aborts when the process must stop (its reason is a string). A thrown error ends
 * the process `failed` with the error's message; returning after `signal` aborted ends it `stopped`.
 */
export type EngineFunction = (
  process: ProcessContext,
  signal: AbortSignal,
) => Promise<EngineOutcome | undefined>;

/** Options of {@link createUrsa}. */
export interface UrsaOptions {
  /** The store: a SQLite file path (default `./data/ursa.db`) or a `postgres://` URL. */
  readonly db?: string;
  /** Engines of the application, by name, added to the built-in `shell`, `http`, `agent` and `noop`. */
  readonly engines?: Readonly<Record<string, EngineFunction>>;
  /** The clock (default: the system clock). Tests pass a stepped one. */
  readonly clock?: Clock;
  /** A pino logger, or a level for Ursa's own (default `info`, JSON lines on stdout). */
  readonly logger?: Logger | string;
  /** Scheduling settings (decisions §4, spec §9a); defaults as the operator configuration's. */
  readonly settings?: Partial<RuntimeSettings>;
  /**
   * Options of the built-in `http` engine: the outbound policy (allow and deny lists, the
   * application's own listeners) and the hosts each secret may go to. Its `secretHosts` also
   * refuse, in `apply`, a recipe naming a secret for another host. Default: no lists, none bound.
   */
  readonly http?: HttpEngineOptions;
  /** The tenant and project calls default to (default `default` / `demo`). */
  readonly tenant?: string;
  readonly project?: string;
}

/** Where a call applies; defaults to the instance's tenant and project. */
export interface Scope {
  readonly tenant?: string;
  readonly project?: string;
}

/** Ursa embedded in an application (issue #5): the same store, loop and services as `ursa serve`. */
export interface Ursa {
  /** The runtime and its repositories, for what the methods below do not cover. */
  readonly runtime: Runtime;
  readonly repos: Repositories;
  /**
   * Starts the scheduling loop in this process (a worker, decisions §5). On SQLite this process
   * first becomes the store's one serving process; if another later takes the store over (this
   * one stalled past its lease), the loop stops claiming and logs it.
   *
   * @throws UrsaError `STORE_LOCKED` when another process serves the SQLite store.
   */
  start(): Promise<void>;
  /** Stops the loop gracefully (running processes get the shutdown grace) and closes the store. */
  stop(): Promise<void>;
  /** Loads a folder laid out like a project (`_vance/recipes`, `_vance/scheduler`), validating each document. */
  apply(dir: string, options?: Scope & { readonly as?: string }): Promise<ApplyEntry[]>;
  /** Re-reads the scheduler documents of a project (spec §8 refresh). */
  refresh(scope?: Scope): Promise<void>;
  /** Fires a scheduler now, through its overlap policy (spec §9 `scheduler_fire`). */
  fire(name: string, scope?: Scope): Promise<FireResult>;
  /** Stops a process on whichever worker runs it (spec §5 `processStop`). */
  stopProcess(processId: string, reason?: string, scope?: Scope): Promise<{ stopping: boolean }>;
}

const DEFAULT_SETTINGS: RuntimeSettings = {
  misfireThresholdMs: 60_000,
  runLogRetentionDays: 7,
  shutdownGraceMs: 30_000,
};

function engineOf(name: string, fn: EngineFunction): Engine {
  return {
    name,
    async run(request: EngineRequest): Promise<EngineResult> {
      const context: ProcessContext = {
        processId: request.processId,
        recipe: request.recipe,
        params: request.params,
        initialMessage: request.initialMessage,
        ...request.context,
        report: (status) => request.report?.(status),
      };
      try {
        const outcome = await fn(context, request.signal);
        if (request.signal.aborted) {
          return {
            status: 'stopped',
            reason: typeof request.signal.reason === 'string' ? request.signal.reason : 'stopped',
          };
        }
        return {
          status: outcome?.status ?? 'done',
          ...(outcome?.reason === undefined ? {} : { reason: outcome.reason }),
          ...(outcome?.output === undefined ? {} : { output: outcome.output }),
        };
      } catch (error) {
        if (request.signal.aborted)
          return { status: 'stopped', reason: String(request.signal.reason ?? 'stopped') };
        return { status: 'failed', reason: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}

/**
 * Embeds Ursa in an application: opens (and migrates) the store, registers the application's
 * engines beside the built-in ones, and returns the services `ursa serve` uses — assembled by the
 * same composition root (`app/compose.ts`) as `ursa serve` and the CLI.
 *
 * ```ts
 * const ursa = await createUrsa({ db: './data/app.db', engines: { greet: async (p) => { console.log(p.params) } } });
 * await ursa.apply('./schedulers');
 * await ursa.start();
 * ```
 *
 * @throws UrsaError `STORE_UNAVAILABLE` when the store cannot be opened; `ENGINE_INVALID` for an engine name taken.
 */
export async function createUrsa(options: UrsaOptions = {}): Promise<Ursa> {
  const engines = defaultEngines(options.http === undefined ? {} : { http: options.http });
  for (const [name, fn] of Object.entries(options.engines ?? {})) engines.register(engineOf(name, fn));
  const { rt: runtime, close } = await compose({
    db: options.db ?? './data/ursa.db',
    clock: options.clock ?? systemClock,
    settings: {
      ...DEFAULT_SETTINGS,
      ...(options.http?.secretHosts === undefined ? {} : { secretHosts: options.http.secretHosts }),
      ...options.settings,
    },
    engines,
    log: typeof options.logger === 'object' ? options.logger : createLogger(options.logger ?? 'info'),
  });
  const tenantOf = (s?: Scope) => s?.tenant ?? options.tenant ?? 'default';
  const projectOf = (s?: Scope) => s?.project ?? options.project ?? 'demo';
  let worker: Worker | undefined;
  return {
    runtime,
    repos: runtime.repos,
    async start() {
      if (worker !== undefined)
        throw new UrsaError('ARGUMENT_INVALID', 'ursa: already started', { field: 'start' });
      worker = await claimWorker(runtime);
      await worker.start();
    },
    async stop() {
      await worker?.stop();
      await close();
    },
    apply: (dir, scope) =>
      applyDirectory(
        runtime,
        resolve(dir),
        tenantOf(scope),
        projectOf(scope),
        libraryActor(scope?.as ?? 'admin'),
      ),
    async refresh(scope) {
      await refreshProjectAs(runtime, libraryActor('admin'), tenantOf(scope), projectOf(scope));
    },
    fire: (name, scope) => fireScheduler(runtime, tenantOf(scope), projectOf(scope), name),
    stopProcess: (processId, reason, scope) => stopProcess(runtime, tenantOf(scope), processId, reason),
  };
}
