import { loadProjectSchedulers } from '../catalog/catalog.js';
import type { Runtime } from '../runtime/context.js';
import { formatInstant } from '../time/instant.js';

/** A scheduler of a project after the cascade, as people see it (REST, CLI, web). Instants are ISO-8601 UTC. */
export interface SchedulerListing {
  readonly name: string;
  readonly description: string;
  readonly cron: string | null;
  readonly at: string | null;
  readonly timezone: string;
  readonly enabled: boolean;
  readonly overlap: string;
  readonly lockMode: string;
  readonly tags: readonly string[];
  readonly source: 'project' | 'tenant';
  readonly nextRunAt: string | null;
  /** The newest feed line of the scheduler (spec §7 "last run"), if any. */
  readonly lastRun: { readonly at: string; readonly outcome: string; readonly correlationId: string } | null;
}

/**
 * The schedulers of a project, sorted by name, with their next run (schedule state) and last run
 * (activity feed), and the documents that could not be loaded. One listing for the REST API and
 * the CLI's local client, so both answer alike; lock modes are not applied (spec §10b: people see all).
 */
export async function listSchedulers(
  rt: Runtime,
  tenant: string,
  project: string,
): Promise<{ schedulers: SchedulerListing[]; invalid: { path: string; message: string }[] }> {
  const { repos } = rt;
  const { schedulers, failures } = await loadProjectSchedulers(repos, tenant, project);
  const states = new Map((await repos.schedules.list(tenant, project)).map((s) => [s.name, s]));
  const list: SchedulerListing[] = [];
  for (const [name, s] of [...schedulers].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const d = s.definition;
    const last = await repos.feed.latestForRef(tenant, project, 'SCHEDULER', name);
    const next = states.get(name)?.nextRunAt ?? null;
    list.push({
      name,
      description: d.description,
      cron: d.trigger.kind === 'cron' ? d.trigger.expression : null,
      at: d.trigger.kind === 'at' ? d.trigger.at : null,
      timezone: d.zone.id,
      enabled: d.enabled,
      overlap: d.overlap,
      lockMode: d.lockMode,
      tags: [...d.tags],
      source: s.source,
      nextRunAt: next === null ? null : formatInstant(next),
      lastRun:
        last === undefined
          ? null
          : { at: formatInstant(last.at), outcome: last.outcome, correlationId: last.traceId },
    });
  }
  return { schedulers: list, invalid: failures.map((f) => ({ path: f.path, message: f.message })) };
}
