import type { Logger } from 'pino';
import type { TemplateLimits } from '../config/template-limits.js';
import type { RunBudget } from '../decisions/budget.js';
import type { EngineRegistry } from '../engines/index.js';
import type { SecretHosts } from '../net/secret-hosts.js';
import type { Repositories } from '../store/index.js';
import type { Clock } from '../time/clock.js';
import type { Metrics } from './metrics.js';
import type { Tracer } from './tracer.js';

/** The operator settings the scheduler runtime reads (decisions §4, spec §9a). */
export interface RuntimeSettings {
  /** misfire: skip drops a due instant older than this, milliseconds (decisions §4). */
  readonly misfireThresholdMs: number;
  /** Run-log retention, days: > 0 keeps that long, 0 forever, < 0 writes none (spec §9a). */
  readonly runLogRetentionDays: number;
  /**
   * The operator's run budget (`budgetRunsPerHour`, `budgetRunsPerDay`), the last level of the
   * `scheduler.budget.*` cascade (issue #22); absent: none.
   */
  readonly budget?: RunBudget;
  /** How long a stop waits for running processes before stopping them, milliseconds. */
  readonly shutdownGraceMs: number;
  /** Whether schedulers may start workflow runs (decisions §2 `workflows`); absent means true. */
  readonly workflowsEnabled?: boolean;
  /**
   * The hosts each secret variable may be sent to (operator setting `secretHosts`, issue #19):
   * a recipe written with a secret header for another host is refused. Absent: none bound. The
   * `http` engine checks again when it sends, with its own copy (`HttpEngineOptions.secretHosts`).
   */
  readonly secretHosts?: SecretHosts;
  /**
   * Where agent services call back (operator setting `publicUrl`, issue #25): an absolute http(s)
   * URL without a trailing `/`. Absent or empty: agent recipes are refused when written, and an
   * agent run that finds none fails before anything is sent.
   */
  readonly publicUrl?: string;
  /** Bounds of workflow templates (issue #19); absent means `DEFAULT_TEMPLATE_LIMITS`. */
  readonly templateLimits?: TemplateLimits;
}

/** Everything the imperative shell of the scheduler needs, injected once. */
export interface Runtime {
  readonly repos: Repositories;
  readonly clock: Clock;
  readonly settings: RuntimeSettings;
  readonly engines: EngineRegistry;
  readonly log: Logger;
  /** Prometheus metrics (issue #7); absent where nothing scrapes them (CLI commands, tests). */
  readonly metrics?: Metrics;
  /**
   * Where spans go (issue #26 item 3): runs, ticks, REST requests; absent when tracing is off
   * (no `OTEL_*` exporter configured), and then no span is built.
   */
  readonly tracer?: Tracer;
}
