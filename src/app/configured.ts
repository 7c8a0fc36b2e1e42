import type { Config } from '../config/load.js';
import { templateLimitsOf } from '../config/schema.js';
import { defaultEngines, type EngineRegistry, type HttpEngineOptions } from '../engines/index.js';
import type { RuntimeSettings } from '../runtime/context.js';

/**
 * The runtime's parts as the operator configuration (`ursa.yaml`, `URSA_*`, flags) chooses them,
 * for the processes the CLI starts; `createUrsa` chooses its own from its options.
 */

/** The scheduling settings of the configuration (decisions §4, spec §9a). */
export function runtimeSettingsOf(config: Config): RuntimeSettings {
  return {
    misfireThresholdMs: config.misfireThresholdMs,
    runLogRetentionDays: config.runLogRetentionDays,
    shutdownGraceMs: config.shutdownGraceMs,
    budget: {
      runsPerHour: config.budgetRunsPerHour === 0 ? undefined : config.budgetRunsPerHour,
      runsPerDay: config.budgetRunsPerDay === 0 ? undefined : config.budgetRunsPerDay,
    },
    workflowsEnabled: config.workflows,
    secretHosts: config.secretHosts,
    publicUrl: config.publicUrl,
    templateLimits: templateLimitsOf(config),
  };
}

/**
 * The `http` engine's options from the configuration (issue #19): the outbound lists, the secret
 * bindings, and the configured `host:port` as Ursa's own listener — refused also for `ursa worker`,
 * which usually runs beside an `ursa serve` of the same configuration.
 */
export function httpEngineOptions(config: Config): HttpEngineOptions {
  return {
    outbound: {
      allow: config.outboundAllow,
      deny: config.outboundDeny,
      listeners: [{ host: config.host, port: config.port }],
    },
    secretHosts: config.secretHosts,
  };
}

/** The built-in engines (`shell`, `http`, `noop`), the `http` one with the configuration's policy. */
export function configuredEngines(config: Config): EngineRegistry {
  return defaultEngines({ http: httpEngineOptions(config) });
}
