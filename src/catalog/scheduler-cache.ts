import type { CronExpression } from '../cron/index.js';
import { isRefusal } from '../errors/index.js';
import { recipePath } from '../recipes/paths.js';
import type { SchedulerDefinition, SchedulerTarget } from '../scheduler/definition.js';
import { parseSchedulerDocument, schedulerPath } from '../scheduler/document.js';
import {
  type DocumentKey,
  documentKeyString,
  type StoredDocument,
  TENANT_PROJECT,
} from '../store/document-rows.js';
import type { Repositories } from '../store/index.js';
import { type ScheduleState, schedulerKeyString } from '../store/schedules.js';
import { workflowPath } from '../workflows/paths.js';
import {
  type CheckLookups,
  checkLookups,
  checkReferences,
  type EffectiveScheduler,
  headOf,
} from './catalog.js';

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

/** How many checked schedulers a cache keeps by default (about 1 KB each: no document body). */
export const DEFAULT_CACHE_CAPACITY = 100_000;

/** Schedulers filled together: one read of their documents, one of their stamps (three keys each). */
const FILL_CHUNK = 1000;

/** What the fills of one {@link SchedulerCache.resolve} share. */
interface FillContext {
  readonly lookups: CheckLookups;
  /** Stamps read so far, by {@link documentKeyString}; undefined for a document that did not exist. */
  readonly stamps: Map<string, string | undefined>;
}

/** A parsed scheduler document on its way into the cache. */
interface Parsed {
  readonly state: ScheduleState;
  readonly document: StoredDocument;
  readonly definition: SchedulerDefinition;
  readonly sources: readonly DocumentKey[];
}

/**
 * Checked schedulers for the tick, so that a claim neither parses YAML nor looks up a recipe
 * (issue #4). An entry is used only while every document it was checked from — the scheduler
 * document and the documents its recipe or workflow could resolve to — has the stamp (row and
 * version) it had then; one query per tick reads the stamps for the whole due batch. Misses are
 * filled together (one read of their documents and one of their stamps per 1,000, recipes and
 * users looked up once per fill; issue #11). Stamps are read before the recipes, and an entry is
 * kept only when its document's stamp is the version read, so a change racing a fill only costs
 * one more fill. At most `capacity` entries are kept, without document bodies; the least recently
 * filled goes first (a deleted scheduler's entry with them).
 */
export class SchedulerCache {
  readonly #entries = new Map<string, Entry>();
  /** One parsed expression per cron text, shared by the entries (2.6 KB each, mostly lookup tables). */
  readonly #crons = new Map<string, CronExpression>();

  constructor(
    private readonly repos: Repositories,
    private readonly capacity = DEFAULT_CACHE_CAPACITY,
  ) {}

  /** Entries held now (at most the capacity). */
  get size(): number {
    return this.#entries.size;
  }

  // The definition with its cron expression shared with every entry of the same text: an
  // expression is immutable (its lazily filled day masks depend on the text alone).
  #shareCron(definition: SchedulerDefinition): SchedulerDefinition {
    const { trigger } = definition;
    if (trigger.kind !== 'cron') return definition;
    const shared = this.#crons.get(trigger.cron.source);
    if (shared === undefined) {
      if (this.#crons.size >= this.capacity) this.#crons.clear();
      this.#crons.set(trigger.cron.source, trigger.cron);
      return definition;
    }
    return shared === trigger.cron ? definition : { ...definition, trigger: { ...trigger, cron: shared } };
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
   * Whether an entry for `state` is held, checked from the document version the state names (its
   * stamps are not read again here: {@link resolve} does that at the claim). What a worker
   * preparing for coming occurrences skips (issue #24).
   */
  holds(state: ScheduleState): boolean {
    const entry = this.#entries.get(schedulerKeyString(state));
    return (
      entry !== undefined &&
      entry.scheduler.document.version === state.documentVersion &&
      entry.scheduler.source === state.source
    );
  }

  /**
   * The effective scheduler behind each state (same order), or undefined where its document is
   * gone, broken, or newer than the state (a refresh re-registers it). Fills what is missing or
   * stale, so resolving states ahead of their occurrence (a worker's start) seeds the cache.
   *
   * @throws the store's errors (`STORE_BUSY`, `STORE_UNAVAILABLE`, …) and any other error that is
   *   not Ursa's refusal of a document: such a scheduler is neither valid nor broken as far as
   *   anyone knows, so the caller's pass fails and is retried.
   */
  async resolve(states: readonly ScheduleState[]): Promise<(EffectiveScheduler | undefined)[]> {
    const resolved: (EffectiveScheduler | undefined)[] = [];
    const misses: number[] = [];
    for (let from = 0; from < states.length; from += FILL_CHUNK) {
      const chunk = states.slice(from, from + FILL_CHUNK);
      const cached = chunk.map((state) => this.#entries.get(schedulerKeyString(state)));
      const keys = new Map<string, DocumentKey>();
      for (const entry of cached)
        for (const { key } of entry?.sources ?? []) keys.set(documentKeyString(key), key);
      const stamps = await this.repos.documents.stamps([...keys.values()]);
      for (const [i, state] of chunk.entries()) {
        const entry = cached[i];
        const fresh =
          entry !== undefined &&
          entry.scheduler.document.version === state.documentVersion &&
          entry.scheduler.source === state.source &&
          entry.sources.every((s) => stamps.get(documentKeyString(s.key)) === s.stamp);
        resolved.push(fresh ? entry.scheduler : undefined);
        if (!fresh) misses.push(from + i);
      }
    }
    // One context for every fill of this call: each recipe or workflow is looked up once, after
    // its stamps were read, and every entry checked against it records those stamps.
    const context: FillContext = { lookups: checkLookups(), stamps: new Map() };
    for (let i = 0; i < misses.length; i += FILL_CHUNK) {
      const chunk = misses.slice(i, i + FILL_CHUNK);
      const filled = await this.#fill(
        chunk.map((k) => states[k] as ScheduleState),
        context,
      );
      for (const [j, k] of chunk.entries()) resolved[k] = filled[j];
    }
    return resolved;
  }

  /** Reads, parses and checks the schedulers behind `states` together; undefined where one cannot be. */
  async #fill(
    states: readonly ScheduleState[],
    context: FillContext,
  ): Promise<(EffectiveScheduler | undefined)[]> {
    for (const state of states) this.#entries.delete(schedulerKeyString(state));
    const documents = await this.repos.documents.getMany(states.map(schedulerDocument));
    const parsed: (Parsed | undefined)[] = states.map((state) => {
      const key = schedulerDocument(state);
      const document = documents.get(documentKeyString(key));
      if (document === undefined || document.version !== state.documentVersion) return undefined;
      try {
        const definition = this.#shareCron(
          parseSchedulerDocument(document.body, {
            name: state.name,
            path: `${document.project}/${document.path}`,
          }),
        );
        const sources = [key, ...targetCandidates(state.tenant, state.project, definition.target)];
        return { state, document, definition, sources };
      } catch {
        // The parse reads nothing: whatever it throws is about the document.
        return undefined;
      }
    });
    // Stamps of the documents not seen yet in this call (the targets' of earlier fills are known).
    const { lookups, stamps } = context;
    const unread = new Map<string, DocumentKey>();
    for (const p of parsed)
      for (const k of p?.sources ?? []) {
        const id = documentKeyString(k);
        if (!stamps.has(id)) unread.set(id, k);
      }
    const read = await this.repos.documents.stamps([...unread.values()]);
    for (const id of unread.keys()) stamps.set(id, read.get(id));
    const filled: (EffectiveScheduler | undefined)[] = [];
    for (const p of parsed) {
      if (p === undefined) {
        filled.push(undefined);
        continue;
      }
      const { state, document, definition, sources } = p;
      try {
        const head = headOf(document);
        const scheduler: EffectiveScheduler = {
          ...(await checkReferences(this.repos, state.project, head, definition, undefined, lookups)),
          source: state.source,
          document: head,
        };
        // A write between the read and the stamps: used this once, checked again next time.
        if (stamps.get(documentKeyString(sources[0] as DocumentKey))?.endsWith(`.${document.version}`))
          this.#set(schedulerKeyString(state), {
            scheduler,
            sources: sources.map((k) => ({ key: k, stamp: stamps.get(documentKeyString(k)) })),
          });
        filled.push(scheduler);
      } catch (error) {
        // A store error says nothing about the document: the tick fails and is retried, and the
        // state is not taken for a broken document (a refresh would remove it; issue #20).
        if (!isRefusal(error)) throw error;
        filled.push(undefined);
      }
    }
    return filled;
  }
}
