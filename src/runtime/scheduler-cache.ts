import { recipePath } from '../recipes/paths.js';
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

/**
 * Checked schedulers for the tick, so that a claim neither parses YAML nor looks up a recipe
 * (issue #4). An entry is used only while every document it was checked from — the scheduler
 * document and the documents its recipe or workflow could resolve to — has the stamp (row and
 * version) it had then; one query per tick reads the stamps for the whole due batch. Stamps are
 * read before the documents, so a change racing a fill only costs one more fill.
 */
export class SchedulerCache {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly repos: Repositories) {}

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
      const targetKeys =
        target.kind === 'recipe'
          ? candidates(state.tenant, state.project, recipePath(target.recipe))
          : candidates(state.tenant, state.project, workflowPath(target.workflow));
      const sources = [documentKey, ...targetKeys];
      const stamps = await this.repos.documents.stamps(sources);
      const scheduler: EffectiveScheduler = {
        ...(await checkScheduler(this.repos, state.project, document)),
        source: state.source,
        document,
      };
      // A write between the read and the stamps: used this once, checked again next time.
      if (stamps.get(documentKeyString(documentKey))?.endsWith(`.${document.version}`))
        this.#entries.set(key, {
          scheduler,
          sources: sources.map((k) => ({ key: k, stamp: stamps.get(documentKeyString(k)) })),
        });
      return scheduler;
    } catch {
      return undefined;
    }
  }
}
