import type { EffectiveScheduler } from '../catalog/catalog.js';
import type {
  LastRun,
  Pause,
  PauseResult,
  RecipeDetail,
  RecipeList,
  SchedulerDescription,
} from '../contract/index.js';
import { isUrsaError, UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { RUN_LOG_PREFIX } from '../runtime/run-log.js';
import { recordedLockMode } from '../scheduler/definition.js';
import { parseSchedulerDocument } from '../scheduler/document.js';
import { schedulerPath } from '../scheduler/paths.js';
import { type BackfillResult, backfillScheduler } from '../service/backfill.js';
import { actorOf, type Caller } from '../service/caller.js';
import { describeScheduler } from '../service/describe.js';
import { getDocument, listDocuments } from '../service/documents.js';
import { schedulerFeedLines } from '../service/feed.js';
import { lastRunView } from '../service/last-run.js';
import { loadSchedulersWithState } from '../service/listing.js';
import { firedOneShot } from '../service/missing.js';
import { pauseScheduler, pausesOf, resumeScheduler } from '../service/pauses.js';
import { getRecipe, listRecipes } from '../service/recipes.js';
import type { FeedLine } from '../service/records.js';
import { refreshProjectAs } from '../service/refresh.js';
import { type FireResult, fireScheduler } from '../service/runs.js';
import { deleteScheduler, type SetResult, setScheduler } from '../service/schedulers.js';
import { checkDocumentPath, locked, noDocument, noRecipe, notFound, oneShotFired } from './agent-errors.js';
import { AgentFilter, logName } from './agent-filter.js';
import { type DocumentPage, documentPage } from './document-page.js';
import { agentMayWrite, agentView } from './lock-gate.js';

/**
 * The agent scope: who calls a tool, and the only way a tool reaches Ursa, with each tool's read
 * or write of the project as the agent may see it. What it may see and write is decided by its
 * {@link AgentFilter} (agent-filter.ts); the errors it throws are in agent-errors.ts.
 */

/** Who calls a tool: an agent acting for a user in a project (decisions §6). */
export interface AgentIdentity {
  readonly tenant: string;
  readonly project: string;
  readonly user: string;
  /** The id of the bearer token the agent connected with (MCP over HTTP), for the audit trail. */
  readonly tokenId?: string | undefined;
}

/** A scheduler an agent may see, as `scheduler_list` shows it. Instants are UTC epoch ms. */
export interface VisibleScheduler {
  readonly name: string;
  readonly scheduler: EffectiveScheduler;
  /** `protected`: the agent may read it but not change it (spec §10b). */
  readonly locked: boolean;
  /** Its newest feed line of a run the agent may see; undefined when there is none. */
  readonly lastRun: LastRun | undefined;
  readonly nextRunAt: number | null;
  /** Why it is paused, who paused it and when; null unless it is paused. */
  readonly paused: Pause | null;
}

/** Feed lines read per page while looking for the newest one an agent may see. */
const FEED_PAGE = 50;

function callerOf(identity: AgentIdentity): Caller {
  // Agents write as their user and never as an admin: runAs is theirs alone (decisions §6).
  // Their writes are marked as an agent's in the audit trail (issue #19).
  return { ...identity, role: 'write', interface: 'mcp', agent: true };
}

/**
 * The project as one agent may see it (spec §10b), built once per tool call from the
 * cascade-resolved scheduler documents (spec §3: the project's own, else `_tenant`'s). It is the
 * only way a tool reaches Ursa — tools get no runtime or store — so every document, run log, feed
 * line, refresh result and count a tool can return has passed its filter, and a tool added later
 * cannot forget one:
 * - a `hidden` scheduler does not exist for the agent: not listed, not counted, "not found";
 * - a run is hidden when it was hidden when it was claimed (the run log's front matter and the
 *   feed line record the mode), so neither deleting the scheduler nor making it `full` later shows
 *   its hidden runs; and while its name is hidden in the project or in `_tenant`, live or as last
 *   known before a person deleted it ({@link LastKnown}, read from the archive of trashed bodies);
 * - every write to a locked name (`protected` or `hidden`) fails with the one {@link locked} error,
 *   and so does an agent's create of a name last known hidden.
 */
export class AgentScope {
  readonly #rt: Runtime;
  readonly #filter: AgentFilter;

  private constructor(
    rt: Runtime,
    readonly identity: AgentIdentity,
    filter: AgentFilter,
  ) {
    this.#rt = rt;
    this.#filter = filter;
  }

  /** Reads the project's scheduler documents and `_tenant`'s (two queries), as they are now. */
  static async open(rt: Runtime, identity: AgentIdentity): Promise<AgentScope> {
    return new AgentScope(rt, identity, await AgentFilter.open(rt, identity.tenant, identity.project));
  }

  /** The valid schedulers the agent may see, by name, each with its last visible run and next run. */
  async schedulers(): Promise<VisibleScheduler[]> {
    const { tenant, project } = this.identity;
    const { schedulers, states } = await loadSchedulersWithState(this.#rt, tenant, project);
    const pauseOf = await pausesOf(this.#rt, tenant, project);
    const out: VisibleScheduler[] = [];
    await this.#filter.loadLastKnown(schedulers.keys());
    for (const [name, scheduler] of [...schedulers].sort(([a], [b]) => (a < b ? -1 : 1))) {
      // A document written since the scope was read is left out until the next call (fail closed).
      const entry = this.#filter.visible(name, false);
      if (entry === undefined) continue;
      out.push({
        name,
        scheduler,
        locked: agentView(entry.lockMode).locked,
        lastRun: await this.#lastRun(name).then((line) =>
          line === undefined ? undefined : lastRunView(this.#rt, line),
        ),
        nextRunAt: states.get(name)?.nextRunAt ?? null,
        paused: pauseOf(scheduler),
      });
    }
    return out;
  }

  async #lastRun(name: string): Promise<FeedLine | undefined> {
    const { tenant, project } = this.identity;
    let before: number | undefined;
    for (;;) {
      const lines = await schedulerFeedLines(this.#rt, tenant, project, name, FEED_PAGE, before);
      const seen = lines.find((line) =>
        this.#filter.maySeeRun(name, recordedLockMode(line.payload.lockMode)),
      );
      if (seen !== undefined || lines.length < FEED_PAGE) return seen;
      before = lines[lines.length - 1]?.id;
    }
  }

  /**
   * The YAML of scheduler `name`, whether it is locked, and the version of the project's own
   * document (0 for a tenant-wide one), which a write may pass back as its expected version.
   *
   * @throws UrsaError `NOT_FOUND` when there is none or it is hidden (the same error),
   *   `ONE_SHOT_FIRED` for a one-shot that fired (see `#missing`).
   */
  async scheduler(name: string): Promise<{ body: string; locked: boolean; version: number }> {
    const entry = this.#filter.visible(name);
    if (entry === undefined) throw await this.#missing(name);
    const { document } = entry;
    const version = document.project === this.identity.project ? document.version : 0;
    return { body: document.body, locked: agentView(entry.lockMode).locked, version };
  }

  /**
   * Scheduler `name` described for the agent (issue #22): what `describeScheduler` says of it,
   * with no count or listing of runs the agent may not see (none at all while the name is hidden in either
   * layer, live or last known); undefined when its document does not load (the agent still gets
   * the YAML, to repair it).
   *
   * @throws UrsaError `NOT_FOUND` (the agents' wording) for a name the agent may not see.
   */
  async describe(name: string, count: number): Promise<SchedulerDescription | undefined> {
    if (this.#filter.visible(name) === undefined) throw notFound(name, this.identity.project);
    const { tenant, project } = this.identity;
    let described: SchedulerDescription;
    try {
      described = await describeScheduler(this.#rt, tenant, project, name, count, { visibleToAgents: true });
    } catch (error) {
      if (isUrsaError(error, 'NOT_FOUND')) return undefined;
      throw error;
    }
    await this.#filter.loadLastKnown([name]);
    if (this.#filter.maySeeRun(name, 'full')) return described;
    // Hidden in a layer: none of its runs is the agent's to count.
    const { bounds } = described;
    return {
      ...described,
      bounds: bounds === null ? null : { ...bounds, runsStarted: null },
      runsLeft: null,
      counts: { runs: 0, byOutcome: {}, coalesced: 0 },
      recentRuns: [],
    };
  }

  /**
   * Creates or replaces scheduler `name` as the agent's user (spec §9 `scheduler_set`); with
   * `expectedVersion`, only while the project's document is at that version (0: none).
   *
   * @throws UrsaError `LOCKED` for a locked name (before the YAML is even read; when the project
   *   has no document of the name, also one last known hidden in either layer), `FORBIDDEN` for a
   *   `runAs` other than the agent's user, and what `setScheduler` throws (`VERSION_MISMATCH`).
   */
  async set(
    name: string,
    yaml: string,
    expectedVersion?: number,
  ): Promise<SetResult & { timezone: string | undefined }> {
    const { identity } = this;
    if (this.#filter.gate(name)?.document.project !== identity.project) {
      await this.#filter.loadLastKnown([name]);
      if (!agentMayWrite(undefined, this.#filter.lastKnown(name))) throw locked(name);
    }
    const written = parseSchedulerDocument(yaml, {
      name,
      path: `${identity.project}/${schedulerPath(name)}`,
    });
    if (written.runAs !== undefined && written.runAs !== identity.user) {
      throw new UrsaError(
        'FORBIDDEN',
        `runAs: an agent may only run schedulers as its own user (${identity.user}); leave runAs out`,
        {
          field: 'runAs',
          value: written.runAs,
          issues: [{ path: 'runAs', message: `may only be ${identity.user}, or left out` }],
        },
      );
    }
    const result = await setScheduler(this.#rt, callerOf(identity), name, yaml, {
      expectedVersion,
      check: this.#filter.gateOnRow(name),
    });
    return { ...result, timezone: result.filledTimezone ?? written.timezone };
  }

  /**
   * Deletes scheduler `name` of the agent's own project (spec §9 `scheduler_delete`).
   *
   * @throws UrsaError `NOT_FOUND` when there is none, `LOCKED` when it is locked (hidden ones too),
   *   `FORBIDDEN` for a tenant-wide one, `VERSION_MISMATCH` when `expectedVersion` is not the
   *   stored version.
   */
  async delete(name: string, expectedVersion?: number): Promise<void> {
    const entry = this.#filter.gate(name);
    if (entry === undefined) throw notFound(name, this.identity.project);
    if (entry.document.project !== this.identity.project) {
      throw new UrsaError(
        'FORBIDDEN',
        `scheduler ${JSON.stringify(name)} is tenant-wide; an agent can delete only schedulers of its own project`,
        { field: 'name', value: name },
      );
    }
    await deleteScheduler(this.#rt, callerOf(this.identity), name, {
      expectedVersion,
      check: this.#filter.gateOnRow(name),
    });
  }

  /**
   * Pauses scheduler `name` of the agent's own project with a note (`pauseScheduler`), or resumes
   * it (`note` null); with `expectedVersion`, only while its document is at that version.
   *
   * @throws UrsaError `NOT_FOUND` when there is none or it is hidden, `LOCKED` when it is locked,
   *   `SCHEDULER_INHERITED` for a tenant-wide one, `VERSION_MISMATCH`, `ARGUMENT_INVALID` (note).
   */
  async setPaused(name: string, note: string | null, expectedVersion?: number): Promise<PauseResult> {
    if (this.#filter.gate(name) === undefined) throw notFound(name, this.identity.project);
    const caller = callerOf(this.identity);
    const guard = { expectedVersion, check: this.#filter.gateOnRow(name) };
    return note === null
      ? resumeScheduler(this.#rt, caller, name, guard)
      : pauseScheduler(this.#rt, caller, name, note, guard);
  }

  /**
   * Why the agent has no scheduler `name` (issue #23: an agent asking for a one-shot that fired
   * was told only "not found"): `ONE_SHOT_FIRED`, saying when it fired, for a one-shot whose run
   * the agent may see while no document of that name is there; otherwise `NOT_FOUND`, so a hidden
   * one-shot's fire stays hidden (spec §10b). No trash path or run id: the agent cannot restore it.
   *
   * @throws a store error (the returned error is the answer, not thrown).
   */
  async #missing(name: string): Promise<UrsaError> {
    const { tenant, project } = this.identity;
    if (this.#filter.entry(name) !== undefined) return notFound(name, project);
    const fired = await firedOneShot(this.#rt, tenant, project, name);
    if (fired === undefined) return notFound(name, project);
    await this.#filter.loadLastKnown([name]);
    if (!this.#filter.maySeeRun(name, fired.lockMode)) return notFound(name, project);
    return oneShotFired(name, fired.firedAt);
  }

  /**
   * Fires scheduler `name` now (spec §9 `scheduler_fire`).
   *
   * @throws UrsaError `NOT_FOUND` when there is none or it is hidden, `ONE_SHOT_FIRED` for a
   *   one-shot that fired (see `#missing`).
   */
  async fire(name: string): Promise<FireResult> {
    if (this.#filter.visible(name) === undefined) throw await this.#missing(name);
    const { tenant, project } = this.identity;
    return fireScheduler(this.#rt, tenant, project, name, actorOf(callerOf(this.identity)));
  }

  /**
   * Backfills scheduler `name` from `from` to `to` (`backfillScheduler`), as a fire runs it: of a
   * scheduler the agent may see (the tool is an admin's, as `scheduler_fire` is).
   *
   * @throws UrsaError `NOT_FOUND` when there is none or it is hidden, and what `backfillScheduler`
   *   throws.
   */
  backfill(name: string, from: string, to: string): Promise<BackfillResult> {
    if (this.#filter.visible(name) === undefined) throw notFound(name, this.identity.project);
    return backfillScheduler(this.#rt, callerOf(this.identity), name, { from, to });
  }

  /** Refreshes the project (spec §8); the result names only schedulers the agent may see. */
  async refresh(): Promise<{ registered: string[]; invalid: { path: string; message: string }[] }> {
    const { tenant, project } = this.identity;
    const result = await refreshProjectAs(this.#rt, actorOf(callerOf(this.identity)), tenant, project);
    return {
      registered: result.registered.filter((name) => this.#filter.visible(name, false) !== undefined),
      invalid: result.failures
        .filter((f) => this.#filter.visible(f.name, false) !== undefined)
        .map((f) => ({ path: f.path, message: f.message })),
    };
  }

  /**
   * The recipes the agent's project can name (decisions §2: its own, `_tenant`'s, built in), and
   * the recipe documents that do not load. A recipe has no lock mode: what a person may read of
   * them over REST with a read token, an agent may read.
   */
  recipes(): Promise<RecipeList> {
    return listRecipes(this.#rt, callerOf(this.identity));
  }

  /**
   * One recipe as the agent's project resolves it, with its YAML.
   *
   * @throws UrsaError `NAME_INVALID`; `NOT_FOUND` (the agents' wording) when no level has it.
   */
  async recipe(name: string): Promise<RecipeDetail> {
    try {
      return await getRecipe(this.#rt, callerOf(this.identity), name);
    } catch (error) {
      if (isUrsaError(error, 'NOT_FOUND')) throw noRecipe(name, this.identity.project);
      throw error;
    }
  }

  /**
   * One page of the documents under `prefix` the agent may read ({@link AgentFilter.mayRead}),
   * newest first (`documentPage`): filtered before paging, so a hidden document never takes a
   * place on a page nor shows in its count.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a cursor no page answered.
   */
  async documents(prefix: string, limit: number, cursor?: string): Promise<DocumentPage> {
    const docs = await listDocuments(this.#rt, this.identity.tenant, this.identity.project, prefix);
    await this.#filter.loadLastKnown(docs.filter((d) => d.path.startsWith(RUN_LOG_PREFIX)).map(logName));
    return documentPage(
      docs.filter((d) => this.#filter.mayRead(d)),
      limit,
      cursor,
    );
  }

  /**
   * One document the agent may read.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a path it may never read ({@link checkDocumentPath});
   *   `NOT_FOUND` when there is none or it may not see it (the same error).
   */
  async document(path: string): Promise<{ path: string; body: string }> {
    checkDocumentPath(path);
    const { tenant, project } = this.identity;
    const doc = await getDocument(this.#rt, { tenant, project, path });
    if (doc !== undefined && path.startsWith(RUN_LOG_PREFIX))
      await this.#filter.loadLastKnown([logName(doc)]);
    if (doc === undefined || !this.#filter.mayRead(doc)) throw noDocument(path);
    return { path: doc.path, body: doc.body };
  }
}
