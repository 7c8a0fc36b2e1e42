import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Ursa's Prometheus metrics (decisions §7, issue #7), one registry per runtime so tests and
 * embedded instances never share counters. Only the shell records into it.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly runs = new Counter({
    name: 'ursa_runs_total',
    help: 'Runs that ended or were skipped, by outcome and trigger.',
    labelNames: ['outcome', 'trigger'] as const,
    registers: [this.registry],
  });
  readonly lateness = new Histogram({
    name: 'ursa_fire_lateness_seconds',
    help: 'Actual start of a run minus the occurrence it serves (scheduledFor), in seconds.',
    labelNames: ['trigger'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300],
    registers: [this.registry],
  });
  readonly ticks = new Counter({
    name: 'ursa_ticks_total',
    help: 'Ticks of the scheduling loop.',
    registers: [this.registry],
  });
  readonly tickOccurrences = new Counter({
    name: 'ursa_tick_occurrences_total',
    help: 'Occurrences seen by ticks, by what happened to them: due, claimed, coalesced, fired, skipped.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly processes = new Gauge({
    name: 'ursa_processes_running',
    help: 'Processes this worker is running now.',
    registers: [this.registry],
  });
  readonly storeErrors = new Counter({
    name: 'ursa_store_errors_total',
    help: 'Errors of the store seen by the scheduling loop.',
    registers: [this.registry],
  });

  /** Records one tick's result (decisions §4 `{due, claimed, coalesced, fired, skipped}`). */
  tick(result: { due: number; claimed: number; coalesced: number; fired: number; skipped: number }): void {
    this.ticks.inc();
    for (const kind of ['due', 'claimed', 'coalesced', 'fired', 'skipped'] as const) {
      if (result[kind] > 0) this.tickOccurrences.inc({ kind }, result[kind]);
    }
  }
}
