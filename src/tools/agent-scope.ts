import { parse as parseYaml } from 'yaml';
import { type EffectiveScheduler, loadProjectSchedulers } from '../catalog/catalog.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { RUN_LOG_PREFIX, runLogLockMode } from '../runtime/run-log.js';
import { type LockMode, recordedLockMode } from '../scheduler/definition.js';
import { parseSchedulerDocument, SCHEDULER_PREFIX, schedulerNameFromPath } from '../scheduler/document.js';
import { schedulerPath } from '../scheduler/paths.js';
import { actorOf, type Caller } from '../service/caller.js';
import { documentKeyString, type FeedLine, type StoredDocument, TENANT_PROJECT } from '../service/records.js';
import { refreshProjectAs } from '../service/refresh.js';
import { type FireResult, fireScheduler } from '../service/runs.js';
import { deleteScheduler, type SetResult, setScheduler } from '../service/schedulers.js';
import { agentMaySeeRun, agentMayWrite, agentView, type LastKnown } from './lock-gate.js';

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
  readonly lastRun: FeedLine | undefined;
  readonly nextRunAt: number | null;
}

/** The cascade-resolved scheduler document of a name (spec §3) and its lock mode. */
interface Entry {
  readonly document: StoredDocument;
  readonly lockMode: LockMode;
}

/** Feed lines read per page while looking for the newest one an agent may see. */
const FEED_PAGE = 50;

/**
 * The one error of a write to a locked scheduler. Its wording and details are the same for
 * `protected` and `hidden` (spec §10b accepts that a write to a guessed hidden name reveals that
 * something locked is there, and nothing more): no lock mode, no owner, no source.
 */
export function locked(scheduler: string): UrsaError {
  return new UrsaError(
    'LOCKED',
    `scheduler ${JSON.stringify(scheduler)} is locked: agents cannot change or delete it, and a project scheduler of the same name cannot override it. Choose another name, or ask a person to change it.`,
    { field: 'name', value: scheduler },
  );
}

function notFound(scheduler: string, identity: AgentIdentity): UrsaError {
  return new UrsaError(
    'NOT_FOUND',
    `there is no scheduler ${JSON.stringify(scheduler)} in project ${identity.project}; scheduler_list shows the ones there are`,
    { field: 'name', value: scheduler },
  );
}

function noRunLog(path: string): UrsaError {
  return new UrsaError(
    'NOT_FOUND',
    `no run log ${JSON.stringify(path)}; document_list shows the ones there are`,
    { field: 'path', value: path },
  );
}

/** @throws UrsaError `ARGUMENT_INVALID` unless `path` is under {@link RUN_LOG_PREFIX}, without `..`. */
function checkLogPath(path: string): void {
  if (!path.startsWith(RUN_LOG_PREFIX) || path.includes('..')) {
    throw new UrsaError(
      'ARGUMENT_INVALID',
      `path: ${JSON.stringify(path)} is not a run log; only documents under ${RUN_LOG_PREFIX} can be read`,
      { field: 'path', value: path, allowed: `a path under ${RUN_LOG_PREFIX}` },
    );
  }
}

/** One layer of the cascade (spec §3): the project or `_tenant`, and the lock mode of each live scheduler document in it. */
interface Layer {
  readonly project: string;
  readonly live: ReadonlyMap<string, LockMode>;
}

/** The lock mode of a scheduler document's body; a document that does not even parse counts as locked. */
function lockModeOf(document: { readonly body: string; readonly path: string }): LockMode {
  try {
    return parseSchedulerDocument(document.body, { name: 'x', path: document.path }).lockMode;
  } catch {
    try {
      const raw = (parseYaml(document.body) as { lockMode?: unknown } | null)?.lockMode;
      return raw === 'full' || raw === 'hidden' ? raw : 'protected';
    } catch {
      return 'protected';
    }
  }
}

/** The scheduler name of a run log: its folder under {@link RUN_LOG_PREFIX} (spec §9a). */
function logName(document: StoredDocument): string {
  return document.path.slice(RUN_LOG_PREFIX.length).split('/')[0] ?? '';
}

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
  readonly #entries: ReadonlyMap<string, Entry>;
  readonly #layers: readonly Layer[];
  /** The {@link LastKnown} of the names looked up so far in this call. */
  readonly #lastKnown = new Map<string, LastKnown>();

  private constructor(
    rt: Runtime,
    readonly identity: AgentIdentity,
    entries: ReadonlyMap<string, Entry>,
    layers: readonly Layer[],
  ) {
    this.#rt = rt;
    this.#entries = entries;
    this.#layers = layers;
  }

  /** Reads the project's scheduler documents and `_tenant`'s (two queries), as they are now. */
  static async open(rt: Runtime, identity: AgentIdentity): Promise<AgentScope> {
    const { tenant, project } = identity;
    const [shared, own] = await Promise.all([
      project === TENANT_PROJECT ? [] : rt.repos.documents.list(tenant, TENANT_PROJECT, SCHEDULER_PREFIX),
      rt.repos.documents.list(tenant, project, SCHEDULER_PREFIX),
    ]);
    const entries = new Map<string, Entry>();
    const layer = (project: string, documents: StoredDocument[]): Layer => {
      const live = new Map<string, LockMode>();
      for (const document of documents) {
        const entry = { document, lockMode: lockModeOf(document) };
        // A project document replaces a tenant one of the same name (spec §3): own come last.
        entries.set(schedulerNameFromPath(document.path), entry);
        live.set(schedulerNameFromPath(document.path), entry.lockMode);
      }
      return { project, live };
    };
    const layers =
      project === TENANT_PROJECT
        ? [layer(project, own)]
        : [layer(TENANT_PROJECT, shared), layer(project, own)];
    return new AgentScope(rt, identity, entries, layers);
  }

  /**
   * Looks up the {@link LastKnown} of those of `names` not looked up yet in this call: one query
   * (per 300 keys) for the newest trashed body of each layer without a live document of the name.
   */
  async #loadLastKnown(names: Iterable<string>): Promise<void> {
    const { tenant } = this.identity;
    const wanted = [...new Set(names)].filter((name) => !this.#lastKnown.has(name));
    // Not schedulerPath: a run-log folder need not be a valid name, and then no document has it.
    const keyOf = (project: string, name: string) => ({
      tenant,
      project,
      path: `${SCHEDULER_PREFIX}${name}.yaml`,
    });
    const trashed = await this.#rt.repos.documents.lastTrashed(
      wanted.flatMap((name) =>
        this.#layers.filter((l) => !l.live.has(name)).map((l) => keyOf(l.project, name)),
      ),
    );
    for (const name of wanted) {
      this.#lastKnown.set(
        name,
        this.#layers.map(({ project, live }) => {
          const key = keyOf(project, name);
          const body = trashed.get(documentKeyString(key));
          return live.get(name) ?? (body === undefined ? undefined : lockModeOf({ body, path: key.path }));
        }),
      );
    }
  }

  /**
   * The cascade-resolved entry of the scheduler `name`, hidden or not (only for the gate and the
   * filters: never returned to a tool).
   *
   * @throws UrsaError `NAME_INVALID` for a name that is no scheduler name.
   */
  #entry(name: string): Entry | undefined {
    schedulerPath(name);
    return this.#entries.get(name);
  }

  /** The entry of `name` when the agent may know of it: there is one and it is not hidden. */
  #visible(name: string, validated = true): Entry | undefined {
    const entry = validated ? this.#entry(name) : this.#entries.get(name);
    return entry !== undefined && agentView(entry.lockMode).visible ? entry : undefined;
  }

  /**
   * Whether the agent may see a run of scheduler `name` recorded under `recorded`; false (fail
   * closed) for a name whose {@link LastKnown} was not looked up first.
   */
  #maySeeRun(name: string, recorded: LockMode): boolean {
    const lastKnown = this.#lastKnown.get(name);
    return lastKnown !== undefined && agentMaySeeRun(lastKnown, recorded);
  }

  #mayRead(document: StoredDocument): boolean {
    return (
      document.path.startsWith(RUN_LOG_PREFIX) &&
      this.#maySeeRun(logName(document), runLogLockMode(document.body))
    );
  }

  /** The valid schedulers the agent may see, by name, each with its last visible run and next run. */
  async schedulers(): Promise<VisibleScheduler[]> {
    const { tenant, project } = this.identity;
    const { repos } = this.#rt;
    const { schedulers } = await loadProjectSchedulers(repos, tenant, project);
    const states = new Map((await repos.schedules.list(tenant, project)).map((s) => [s.name, s]));
    const out: VisibleScheduler[] = [];
    await this.#loadLastKnown(schedulers.keys());
    for (const [name, scheduler] of [...schedulers].sort(([a], [b]) => (a < b ? -1 : 1))) {
      // A document written since the scope was read is left out until the next call (fail closed).
      const entry = this.#visible(name, false);
      if (entry === undefined) continue;
      out.push({
        name,
        scheduler,
        locked: agentView(entry.lockMode).locked,
        lastRun: await this.#lastRun(name),
        nextRunAt: states.get(name)?.nextRunAt ?? null,
      });
    }
    return out;
  }

  async #lastRun(name: string): Promise<FeedLine | undefined> {
    const { tenant, project } = this.identity;
    let before: number | undefined;
    for (;;) {
      const lines = await this.#rt.repos.feed.listForRef(
        tenant,
        project,
        'SCHEDULER',
        name,
        FEED_PAGE,
        before,
      );
      const seen = lines.find((line) => this.#maySeeRun(name, recordedLockMode(line.payload.lockMode)));
      if (seen !== undefined || lines.length < FEED_PAGE) return seen;
      before = lines[lines.length - 1]?.id;
    }
  }

  /**
   * The YAML of scheduler `name`, whether it is locked, and the version of the project's own
   * document (0 for a tenant-wide one), which a write may pass back as its expected version.
   *
   * @throws UrsaError `NOT_FOUND` when there is none or it is hidden (the same error).
   */
  scheduler(name: string): { body: string; locked: boolean; version: number } {
    const entry = this.#visible(name);
    if (entry === undefined) throw notFound(name, this.identity);
    const { document } = entry;
    const version = document.project === this.identity.project ? document.version : 0;
    return { body: document.body, locked: agentView(entry.lockMode).locked, version };
  }

  /** @throws UrsaError `LOCKED` ({@link locked}) when the cascade-resolved entry of `name` is locked. */
  #gate(name: string): Entry | undefined {
    const entry = this.#entry(name);
    if (entry !== undefined && !agentMayWrite(entry.lockMode)) throw locked(name);
    return entry;
  }

  /**
   * The gate again, on the project's own document as the write's transaction holds it: a person
   * who locks the scheduler while an agent's write is under way wins (issue #19).
   */
  #gateOnRow(name: string): (current: StoredDocument | undefined) => void {
    return (current) => {
      if (current !== undefined && !agentMayWrite(lockModeOf(current))) throw locked(name);
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
    if (this.#gate(name)?.document.project !== identity.project) {
      await this.#loadLastKnown([name]);
      if (!agentMayWrite(undefined, this.#lastKnown.get(name))) throw locked(name);
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
      check: this.#gateOnRow(name),
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
    const entry = this.#gate(name);
    if (entry === undefined) throw notFound(name, this.identity);
    if (entry.document.project !== this.identity.project) {
      throw new UrsaError(
        'FORBIDDEN',
        `scheduler ${JSON.stringify(name)} is tenant-wide; an agent can delete only schedulers of its own project`,
        { field: 'name', value: name },
      );
    }
    await deleteScheduler(this.#rt, callerOf(this.identity), name, {
      expectedVersion,
      check: this.#gateOnRow(name),
    });
  }

  /**
   * Fires scheduler `name` now (spec §9 `scheduler_fire`).
   *
   * @throws UrsaError `NOT_FOUND` when there is none or it is hidden.
   */
  fire(name: string): Promise<FireResult> {
    if (this.#visible(name) === undefined) throw notFound(name, this.identity);
    const { tenant, project } = this.identity;
    return fireScheduler(this.#rt, tenant, project, name, actorOf(callerOf(this.identity)));
  }

  /** Refreshes the project (spec §8); the result names only schedulers the agent may see. */
  async refresh(): Promise<{ registered: string[]; invalid: { path: string; message: string }[] }> {
    const { tenant, project } = this.identity;
    const result = await refreshProjectAs(this.#rt, actorOf(callerOf(this.identity)), tenant, project);
    return {
      registered: result.registered.filter((name) => this.#visible(name, false) !== undefined),
      invalid: result.failures
        .filter((f) => this.#visible(f.name, false) !== undefined)
        .map((f) => ({ path: f.path, message: f.message })),
    };
  }

  /**
   * The paths of the run logs under `prefix` the agent may see, sorted by path, the last `limit`.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a prefix outside the run logs.
   */
  async runLogs(prefix: string, limit: number): Promise<string[]> {
    checkLogPath(prefix);
    const docs = await this.#rt.repos.documents.list(this.identity.tenant, this.identity.project, prefix);
    await this.#loadLastKnown(docs.map(logName));
    // Filtered before the limit: a hidden log never takes the place of a visible one.
    return docs
      .filter((d) => this.#mayRead(d))
      .slice(-limit)
      .map((d) => d.path);
  }

  /**
   * One run log the agent may see.
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a path outside the run logs; `NOT_FOUND` when there is
   *   none or it is hidden (the same error).
   */
  async runLog(path: string): Promise<{ path: string; body: string }> {
    checkLogPath(path);
    const { tenant, project } = this.identity;
    const doc = await this.#rt.repos.documents.get({ tenant, project, path });
    if (doc !== undefined) await this.#loadLastKnown([logName(doc)]);
    if (doc === undefined || !this.#mayRead(doc)) throw noRunLog(path);
    return { path: doc.path, body: doc.body };
  }
}
