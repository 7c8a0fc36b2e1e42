import type { RecipeDefinition } from '../recipes/recipe.js';

/** How often an engine reports its output's tails while a process runs (`EngineRequest.progress`), ms. */
export const PROGRESS_INTERVAL_MS = 1000;

/** What an engine is asked to run: one process made from a recipe (spec §4.1). */
export interface EngineRequest {
  readonly processId: string;
  readonly recipe: RecipeDefinition;
  /** The recipe's default params with the scheduler's params merged over them. */
  readonly params: Readonly<Record<string, unknown>>;
  readonly initialMessage: string | undefined;
  /**
   * Context handed to the process (the shell engine exports it as `URSA_*` variables, the http
   * engine sends it in its payload's `trigger`).
   */
  readonly context: {
    readonly tenant: string;
    readonly project: string;
    readonly scheduler: string;
    readonly correlationId: string;
    /** The occurrence this run serves, UTC epoch ms. */
    readonly scheduledFor: number;
    readonly runAs: string;
    /**
     * The fencing token of the run's attempt (decisions §5): an integer, larger than the token of
     * every earlier attempt of the same scheduler, and so of the same run (an attempt is each
     * start of the run: its first, a takeover after a lost worker, a retry). A service the run
     * changes can keep the largest token it has accepted and refuse a smaller one: a stale attempt
     * (its worker lost its lease and another took the run over) is refused. Every step of a
     * workflow run a scheduler started carries its run's token. Absent only for the steps of a
     * workflow run started by hand (`ursa workflow run`, REST), which no scheduler run holds.
     */
    readonly fencingToken?: number;
    /** Which attempt of the run this is: 1 for its first start, then 2, 3, …; absent with `fencingToken`. */
    readonly attempt?: number;
    /**
     * The W3C trace context of the run's span (issue #26 item 3), `00-<trace id>-<span id>-01`,
     * so a process's own spans join the run's trace: the shell engine exports it as `TRACEPARENT`,
     * the http engine sends it as the `traceparent` header. Absent when tracing is off, and for
     * the steps of a workflow run started by hand (no scheduler run, so no run span).
     */
    readonly traceparent?: string;
  };
  /** Aborted when the process must stop (overlap `cancelPrevious`, shutdown, admin stop); the reason is a string. */
  readonly signal: AbortSignal;
  /**
   * Reports a status change while the process runs: an engine may pause, block or suspend a
   * process and resume it (`running`). Optional for engines; the final status is the result.
   */
  readonly report?: (status: 'running' | 'paused' | 'blocked' | 'suspended') => void;
  /**
   * Reports the tails of the process's output while it runs (issue #23: a running run's page shows
   * it), each the last bytes the engine keeps as UTF-8, at most every {@link PROGRESS_INTERVAL_MS}
   * and only when they changed. Optional for engines; the final tails are in the result.
   */
  readonly progress?: (tails: { readonly output: string; readonly errorOutput: string }) => void;
  /**
   * Called by an engine once for each OS process group it starts, at once after the start, with
   * the group's id (the pid of its leader, which the engine has not reaped yet): the worker
   * records the group so that it is ended if the worker dies or loses its lease, and never
   * outlives the run (decisions §5 fencing). Engines that start no OS process never call it.
   */
  readonly spawned?: (pgid: number) => void;
  /**
   * For an engine that hands its run to a service ({@link Engine.handsOff}, issue #25): where the
   * service calls back (the run's callback URL, no trailing `/`) and the attempt's run credential
   * (decisions §6: valid for this run's callbacks until it ends; the store keeps only its hash).
   * Absent for every other engine.
   */
  readonly callback?: { readonly url: string; readonly credential: string };
}

/** How a process ended, or (`accepted`) that a service took it over. */
export interface EngineResult {
  /**
   * `done`: success; `failed`: error or non-zero exit; `stopped`: the signal was aborted;
   * `accepted`: a service took the run over ({@link Engine.handsOff}, issue #25) and reports its
   * end by callbacks: the run stays active, owned by the store.
   */
  readonly status: 'done' | 'failed' | 'stopped' | 'accepted';
  /** `accepted`: the service's own reference of the run (from its 202). */
  readonly reference?: string;
  /** Process exit code (shell engine), when there was one. */
  readonly exitCode?: number;
  /** Why it failed or stopped, e.g. `exit code 3`, `timeout after 30000 ms`, `killed by SIGTERM`. */
  readonly reason?: string;
  /** The tail of standard output (at most a few KiB), for the run log. */
  readonly output?: string;
  /** The tail of standard error (at most a few KiB), for the run log. */
  readonly errorOutput?: string;
}

/**
 * A stop of a run an engine handed to a service ({@link Engine.handsOff}, issue #25): its recipe,
 * context and the service's `reference`, and why it stops (`scheduler-overlap`, `stopped`, …).
 */
export interface HandOffStop {
  readonly processId: string;
  readonly recipe: RecipeDefinition;
  readonly context: EngineRequest['context'];
  readonly reference: string;
  readonly reason: string;
}

/** The answer to a question a handed-off run asked (issue #25): which question (its inbox id), what, who. */
export interface HandOffAnswer {
  readonly processId: string;
  readonly recipe: RecipeDefinition;
  readonly context: EngineRequest['context'];
  readonly reference: string;
  readonly questionId: number;
  readonly answer: string;
  readonly answeredBy: string;
}

/** Engines are code (decisions §2): `shell` and `noop` built in, more registered by library users. */
export interface Engine {
  readonly name: string;
  /**
   * True for an engine that hands its run to a service and returns `accepted` at once (the
   * `agent` engine, issue #25): the worker gives it a `callback` and the run stays active after
   * its return, until a callback or a heartbeat timeout ends it. Absent: false.
   */
  readonly handsOff?: boolean;
  /**
   * Asks the service of a run this engine handed off to stop it (issue #25): resolves to `taken`
   * when the service took the request (it confirms by its `complete` callback), or to why not.
   * Never rejects. Only for an engine that {@link handsOff}.
   */
  stop?(
    stop: HandOffStop,
  ): Promise<{ readonly taken: true } | { readonly taken: false; readonly reason: string }>;
  /**
   * Delivers the answer to a question a run this engine handed off asked (issue #25): `taken` when
   * the service took it, or why not. Never rejects. Only for an engine that {@link handsOff}.
   */
  answer?(
    answer: HandOffAnswer,
  ): Promise<{ readonly taken: true } | { readonly taken: false; readonly reason: string }>;
  /** Runs one process to its end. Never rejects: failures are an `EngineResult` with status `failed`. */
  run(request: EngineRequest): Promise<EngineResult>;
}

/** The texts of an engine's result with every NUL (U+0000) as U+FFFD, the replacement character. */
function storable(result: EngineResult): EngineResult {
  const { output, errorOutput, reason } = result;
  if (![output, errorOutput, reason].some((text) => text?.includes('\u0000'))) return result;
  const clean = (text: string) => text.replaceAll('\u0000', '\uFFFD');
  return {
    ...result,
    ...(output === undefined ? {} : { output: clean(output) }),
    ...(errorOutput === undefined ? {} : { errorOutput: clean(errorOutput) }),
    ...(reason === undefined ? {} : { reason: clean(reason) }),
  };
}

/**
 * Runs `engine` for `request`, as every run and workflow step does: the result as the engine gave
 * it, except that a NUL in its output, error output or reason is U+FFFD. A process may print
 * anything, and PostgreSQL text cannot hold NUL: a run whose output held one could not be
 * recorded (issue #19). CommonMark shows NUL as U+FFFD as well.
 */
export async function runEngine(engine: Engine, request: EngineRequest): Promise<EngineResult> {
  return storable(await engine.run(request));
}
