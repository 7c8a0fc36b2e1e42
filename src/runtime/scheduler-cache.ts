import { recipePath } from '../recipes/paths.js';
import type { SchedulerTarget } from '../scheduler/definition.js';
import { parseSchedulerDocument, schedulerPath } from '../scheduler/document.js';
import { type DocumentKey, documentKeyString, TENANT_PROJECT } from '../store/documents.js';
import type { Repositories } from '../store/index.js';
import { type ScheduleState, schedulerKeyString } from '../store/schedules.js';
import { workflowPath } from '../workflows/paths.js';
import { checkScheduler, type EffectiveScheduler } from './catalog.js';

interface Entry {
  readonly scheduler: EffectiveScheduler;
  /** The documents it was checked from (the scheduler's, then its recipe's candidates) and their stamps. */
  readonly sources: readonly { readonly key: DocumentKey; readonly stamp: string | undefined }[];
}

function schedulerDocument(state: ScheduleState): DocumentKey {
  const project = state.source === 'tenant' ? TENANT_PROJECT : state.project;
  return { tenant: state.tenant, project, path: schedulerPath(state.name) };
}

/** Where a recipe or workflow of a (tenant, project) can come from: the project, then `_tenant` (decisions §2). */
function candidates(tenant: string, project: string, path: string): DocumentKey[] {
  return project === TENANT_PROJECT
    ? [{ tenant, project, path }]
    : [
        { tenant, project, path },
        { tenant, project: TENANT_PROJECT, path },
      ];
}

/** Where a scheduler's target document can come from. */
function targetCandidates(tenant: string, project: string, target: SchedulerTarget): DocumentKey[] {
  return target.kind === 'recipe'
    ? candidates(tenant, project, recipePath(target.recipe))
    : candidates(tenant, project, workflowPath(target.workflow));
}

/** How many checked schedulers a cache keeps by default (about 2–3 KB each). */
export const DEFAULT_CACHE_CAPACITY = 100_000;

/** Schedulers per stamps query when seeding (three document keys each, under SQLite's variable limit). */
const SEED_CHUNK = 1000;

/**
 * Checked schedulers for the tick, so that a claim neither parses YAML nor looks up a recipe
 * (issue #4). An entry is used only while every document it was checked from — the scheduler
 * document and the documents its recipe or workflow could resolve to — has the stamp (row and
 * version) it had then; one query per tick reads the stamps for the whole due batch. Stamps are
 * read before the documents, so a change racing a fill only costs one more fill. At most
 * `capacity` entries are kept; the least recently filled goes first (a deleted scheduler's entry
 * with them).
 */
export class SchedulerCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly repos: Repositories,
    private readonly capacity = DEFAULT_CACHE_CAPACITY,
  ) {}

  /**
   * Seeds entries with the schedulers of one (tenant, project) that a refresh has just checked
   * (`schedulers` by name, as `loadProjectSchedulers` returns them), so that the first claims after
   * a start parse nothing. An entry whose document changed since it was read is left out.
   */
  async remember(
    tenant: string,
    project: string,
    schedulers: ReadonlyMap<string, EffectiveScheduler>,
  ): Promise<void> {
    const all = [...schedulers];
    for (let i = 0; i < all.length && this.#entries.size < this.capacity; i += SEED_CHUNK) {
      const chunk = all.slice(i, i + SEED_CHUNK).map(([name, scheduler]) => {
        const documentKey: DocumentKey = {
          tenant,
          project: scheduler.document.project,
          path: scheduler.document.path,
        };
        const sources = [documentKey, ...targetCandidates(tenant, project, scheduler.definition.target)];
        return { key: schedulerKeyString({ tenant, project, name }), scheduler, sources };
      });
      const stamps = await this.repos.documents.stamps(chunk.flatMap((c) => c.sources));
      for (const { key, scheduler, sources } of chunk) {
        const stamp = stamps.get(documentKeyString(sources[0] as DocumentKey));
        if (stamp?.endsWith(`.${scheduler.document.version}`))
          this.#set(key, {
            scheduler,
            sources: sources.map((k) => ({ key: k, stamp: stamps.get(documentKeyString(k)) })),
          });
      }
    }
  }

  #set(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /**
   * The effective scheduler behind each state (same order), or undefined where its document is
   * gone, broken, or newer than the state (a refresh re-registers it).
   */
  async resolve(states: readonly ScheduleState[]): Promise<(EffectiveScheduler | undefined)[]> {
    const cached = states.map((state) => this.#entries.get(schedulerKeyString(state)));
    const keys = new Map<string, DocumentKey>();
    for (const [i, state] of states.entries()) {
      const scheduler = schedulerDocument(state);
      keys.set(documentKeyString(scheduler), scheduler);
      for (const { key } of cached[i]?.sources ?? []) keys.set(documentKeyString(key), key);
    }
    const stamps = await this.repos.documents.stamps([...keys.values()]);
    return Promise.all(
      states.map((state, i) => {
        const entry = cached[i];
        const fresh =
          entry !== undefined &&
          entry.scheduler.document.version === state.documentVersion &&
          entry.scheduler.source === state.source &&
          entry.sources.every((s) => stamps.get(documentKeyString(s.key)) === s.stamp);
        return fresh ? entry.scheduler : this.#fill(state);
      }),
    );
  }

  async #fill(state: ScheduleState): Promise<EffectiveScheduler | undefined> {
    const key = schedulerKeyString(state);
    this.#entries.delete(key);
    const documentKey = schedulerDocument(state);
    const document = await this.repos.documents.get(documentKey);
    if (document === undefined || document.version !== state.documentVersion) return undefined;
    try {
      // Parsed once for the target's name, so that its documents' stamps are read before
      // checkScheduler reads the documents themselves.
      const { target } = parseSchedulerDocument(document.body, {
        name: state.name,
        path: `${document.project}/${document.path}`,
      });
      const sources = [documentKey, ...targetCandidates(state.tenant, state.project, target)];
      const stamps = await this.repos.documents.stamps(sources);
      const scheduler: EffectiveScheduler = {
        ...(await checkScheduler(this.repos, state.project, document)),
        source: state.source,
        document,
      };
      // A write between the read and the stamps: used this once, checked again next time.
      if (stamps.get(documentKeyString(documentKey))?.endsWith(`.${document.version}`))
        this.#set(key, {
          scheduler,
          sources: sources.map((k) => ({ key: k, stamp: stamps.get(documentKeyString(k)) })),
        });
      return scheduler;
    } catch {
      return undefined;
    }
  }
}
