import { schedulerPath } from '../scheduler/document.js';
import { TENANT_PROJECT } from '../store/documents.js';
import type { Run } from '../store/runs.js';
import { checkScheduler } from './catalog.js';
import type { Runtime } from './context.js';
import { Executor } from './executor.js';
import { refreshAll } from './registrar.js';
import { Ticker, type TickResult } from './ticker.js';

/** Options of the scheduling loop. */
export interface WorkerOptions {
  /** Longest sleep between two looks at the store, milliseconds (changes by other processes show within it). */
  readonly maxSleepMs?: number;
  /** How often expired documents are deleted, milliseconds (decisions §2: at least once a minute). */
  readonly sweepEveryMs?: number;
}

/**
 * The long-running scheduler (the imperative shell): bootstraps every active project, then
 * sleeps until the earliest `nextRunAt` of the store (capped, re-checked on every wake), ticks,
 * and repeats. Only this loop and the adapters read the clock and sleep.
 */
export class Worker {
  readonly executor: Executor;
  readonly ticker: Ticker;
  readonly #maxSleepMs: number;
  readonly #sweepEveryMs: number;
  #stopping = false;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly rt: Runtime,
    options: WorkerOptions = {},
  ) {
    this.executor = new Executor(rt);
    this.ticker = new Ticker(rt, this.executor);
    this.#maxSleepMs = options.maxSleepMs ?? 1000;
    this.#sweepEveryMs = options.sweepEveryMs ?? 30_000;
  }

  /** One pass: claim and dispatch whatever is due now (also what tests call, with a stepped clock). */
  tick(): Promise<TickResult> {
    return this.ticker.tick();
  }

  /**
   * Start-up work before the first tick: finish what a previous process of this store left
   * (runs claimed but never started are started once; processes left running are ended
   * `failed`, reason `worker-lost`), then refresh every active project (spec §8 bootstrap).
   */
  async bootstrap(): Promise<void> {
    await this.#recover();
    await refreshAll(this.rt);
  }

  /** Bootstraps and runs the loop until {@link stop}. */
  async start(): Promise<void> {
    await this.bootstrap();
    this.#loop = this.#run();
  }

  /** Stops claiming, lets running processes finish within the grace period, then stops them. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
    await this.executor.drain(this.rt.settings.shutdownGraceMs);
  }

  async #run(): Promise<void> {
    const { clock, repos, log } = this.rt;
    while (!this.#stopping) {
      try {
        await this.ticker.tick();
        const now = clock.now();
        if (now - this.#lastSweep >= this.#sweepEveryMs) {
          this.#lastSweep = now;
          const swept = await repos.documents.sweepExpired(now);
          if (swept > 0) log.info({ swept }, 'expired documents deleted');
        }
        const earliest = await repos.schedules.earliestNextRunAt();
        const wait =
          earliest === null
            ? this.#maxSleepMs
            : Math.min(Math.max(earliest - clock.now(), 0), this.#maxSleepMs);
        await this.#sleep(wait);
      } catch (error) {
        log.error({ err: error }, 'scheduler loop error; retrying');
        await this.#sleep(this.#maxSleepMs);
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  async #recover(): Promise<void> {
    const { repos, clock, log } = this.rt;
    for (const run of await repos.runs.inState('started', 10_000)) {
      const process = run.processId === null ? undefined : await repos.processes.get(run.processId);
      const now = clock.now();
      if (process !== undefined) {
        await repos.processes.transition(process.id, ['ready', 'running', 'paused', 'blocked', 'suspended'], {
          status: 'failed',
          ended_at: now,
          reason: 'worker-lost',
        });
      }
      if (
        !(await repos.runs.transition(run.correlationId, 'started', {
          state: 'ended',
          outcome: 'failed',
          reason: 'worker-lost',
          ended_at: now,
        }))
      ) {
        continue;
      }
      const ended: Run = { ...run, state: 'ended', outcome: 'failed', reason: 'worker-lost', endedAt: now };
      await this.executor.appendLine(ended, 'END', now, 'failed', {
        processId: run.processId,
        reason: 'worker-lost',
      });
      await this.executor.writeRunLog(
        ended,
        run.processId === null ? undefined : await repos.processes.get(run.processId),
      );
      log.warn({ scheduler: run.name, correlationId: run.correlationId }, 'run ended: its worker was lost');
    }
    for (const run of await repos.runs.inState('claimed', 10_000)) {
      const state = await repos.schedules.get(run);
      const project = state?.source === 'tenant' ? TENANT_PROJECT : run.project;
      const document = await repos.documents.get({
        tenant: run.tenant,
        project,
        path: schedulerPath(run.name),
      });
      if (document === undefined) continue;
      try {
        const { definition, runAs } = await checkScheduler(repos, run.project, document);
        this.executor.start(run, { definition, runAs, document, source: state?.source ?? 'project' });
        log.info({ scheduler: run.name, correlationId: run.correlationId }, 'claimed run recovered');
      } catch (error) {
        log.warn(
          { err: error, scheduler: run.name },
          'claimed run cannot be recovered: its document is invalid',
        );
      }
    }
  }
}
