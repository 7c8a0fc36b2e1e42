import { parse as parseYaml } from 'yaml';
import type { Runtime } from '../runtime/context.js';
import { RUN_LOG_PREFIX, runLogLockMode } from '../runtime/run-log.js';
import type { LockMode } from '../scheduler/definition.js';
import { parseSchedulerDocument, SCHEDULER_PREFIX, schedulerNameFromPath } from '../scheduler/document.js';
import { schedulerPath } from '../scheduler/paths.js';
import { lastTrashedBodies, listDocuments } from '../service/documents.js';
import { documentKeyString, type StoredDocument, TENANT_PROJECT } from '../service/records.js';
import { isReadableArea, locked } from './agent-errors.js';
import { agentMaySeeRun, agentMayWrite, agentView, type LastKnown } from './lock-gate.js';

/**
 * The filter of an `AgentScope` (spec §10b): the cascade-resolved scheduler documents of one
 * project (spec §3) with their lock modes, the {@link LastKnown} modes of names looked up, and the
 * checks over them of what the agent may see and write. Only the agent scope uses it, and never
 * hands it or an entry to a tool.
 */

/** The cascade-resolved scheduler document of a name (spec §3) and its lock mode. */
export interface Entry {
  readonly document: StoredDocument;
  readonly lockMode: LockMode;
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
export function logName(document: StoredDocument): string {
  return document.path.slice(RUN_LOG_PREFIX.length).split('/')[0] ?? '';
}

/**
 * What one agent may see and write of a project, read once per tool call from the
 * cascade-resolved scheduler documents (spec §3: the project's own, else `_tenant`'s).
 */
export class AgentFilter {
  readonly #rt: Runtime;
  readonly #tenant: string;
  readonly #entries: ReadonlyMap<string, Entry>;
  readonly #layers: readonly Layer[];
  /** The {@link LastKnown} of the names looked up so far in this call. */
  readonly #lastKnown = new Map<string, LastKnown>();

  private constructor(
    rt: Runtime,
    tenant: string,
    entries: ReadonlyMap<string, Entry>,
    layers: readonly Layer[],
  ) {
    this.#rt = rt;
    this.#tenant = tenant;
    this.#entries = entries;
    this.#layers = layers;
  }

  /** Reads the project's scheduler documents and `_tenant`'s (two queries), as they are now. */
  static async open(rt: Runtime, tenant: string, project: string): Promise<AgentFilter> {
    const [shared, own] = await Promise.all([
      project === TENANT_PROJECT ? [] : listDocuments(rt, tenant, TENANT_PROJECT, SCHEDULER_PREFIX),
      listDocuments(rt, tenant, project, SCHEDULER_PREFIX),
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
    return new AgentFilter(rt, tenant, entries, layers);
  }

  /**
   * Looks up the {@link LastKnown} of those of `names` not looked up yet in this call: one query
   * (per 300 keys) for the newest trashed body of each layer without a live document of the name.
   */
  async loadLastKnown(names: Iterable<string>): Promise<void> {
    const tenant = this.#tenant;
    const wanted = [...new Set(names)].filter((name) => !this.#lastKnown.has(name));
    // Not schedulerPath: a run-log folder need not be a valid name, and then no document has it.
    const keyOf = (project: string, name: string) => ({
      tenant,
      project,
      path: `${SCHEDULER_PREFIX}${name}.yaml`,
    });
    const trashed = await lastTrashedBodies(
      this.#rt,
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

  /** The {@link LastKnown} of `name`; undefined when it was not looked up ({@link loadLastKnown}). */
  lastKnown(name: string): LastKnown | undefined {
    return this.#lastKnown.get(name);
  }

  /**
   * The cascade-resolved entry of the scheduler `name`, hidden or not (only for the gate and the
   * filters: never returned to a tool).
   *
   * @throws UrsaError `NAME_INVALID` for a name that is no scheduler name.
   */
  entry(name: string): Entry | undefined {
    schedulerPath(name);
    return this.#entries.get(name);
  }

  /** The entry of `name` when the agent may know of it: there is one and it is not hidden. */
  visible(name: string, validated = true): Entry | undefined {
    const entry = validated ? this.entry(name) : this.#entries.get(name);
    return entry !== undefined && agentView(entry.lockMode).visible ? entry : undefined;
  }

  /**
   * Whether the agent may see a run of scheduler `name` recorded under `recorded`; false (fail
   * closed) for a name whose {@link LastKnown} was not looked up first.
   */
  maySeeRun(name: string, recorded: LockMode): boolean {
    const lastKnown = this.#lastKnown.get(name);
    return lastKnown !== undefined && agentMaySeeRun(lastKnown, recorded);
  }

  /**
   * Whether the agent may read `document` of its project (issue #23): a run log of a run it may
   * see; a scheduler document that is the cascade's entry of its name and not hidden (read as it
   * is now: one written since the scope was read is left out, fail closed); recipes, workflows and
   * documents outside `_vance/`. Nothing else under `_vance/` (the trash keeps hidden bodies).
   * Run logs need their names' {@link LastKnown} looked up first.
   */
  mayRead(document: StoredDocument): boolean {
    const { path } = document;
    if (path.startsWith(RUN_LOG_PREFIX))
      return this.maySeeRun(logName(document), runLogLockMode(document.body));
    if (path.startsWith(SCHEDULER_PREFIX)) {
      const entry = path.endsWith('.yaml') ? this.#entries.get(schedulerNameFromPath(path)) : undefined;
      return (
        entry !== undefined &&
        entry.document.project === document.project &&
        entry.document.path === path &&
        agentView(entry.lockMode).visible &&
        agentView(lockModeOf(document)).visible
      );
    }
    return isReadableArea(path);
  }

  /** @throws UrsaError `LOCKED` ({@link locked}) when the cascade-resolved entry of `name` is locked. */
  gate(name: string): Entry | undefined {
    const entry = this.entry(name);
    if (entry !== undefined && !agentMayWrite(entry.lockMode)) throw locked(name);
    return entry;
  }

  /**
   * The gate again, on the project's own document as the write's transaction holds it: a person
   * who locks the scheduler while an agent's write is under way wins (issue #19).
   */
  gateOnRow(name: string): (current: StoredDocument | undefined) => void {
    return (current) => {
      if (current !== undefined && !agentMayWrite(lockModeOf(current))) throw locked(name);
    };
  }
}
