import type { TemplateLimits } from '../config/template-limits.js';
import { isRefusal, UrsaError, type ValidationIssue } from '../errors/index.js';
import { builtinRecipe } from '../recipes/builtin.js';
import { parseRecipeDocument } from '../recipes/parse.js';
import { recipePath } from '../recipes/paths.js';
import type { RecipeDefinition } from '../recipes/recipe.js';
import { resolveRecipe } from '../recipes/resolve.js';
import type { SchedulerDefinition } from '../scheduler/definition.js';
import { parseSchedulerDocument, SCHEDULER_PREFIX, schedulerNameFromPath } from '../scheduler/document.js';
import {
  type DocumentHead,
  documentKeyString,
  type StoredDocument,
  TENANT_PROJECT,
} from '../store/document-rows.js';
import type { Repositories } from '../store/index.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import { parseWorkflowDocument } from '../workflows/parse.js';
import { workflowPath } from '../workflows/paths.js';

/** A scheduler as it applies to one project after the cascade (spec §3). */
export type EffectiveScheduler = CheckedScheduler & {
  readonly source: 'project' | 'tenant';
  /** The document it was checked from; the body is not kept (a cache holds many of these, issue #11). */
  readonly document: DocumentHead;
};

/** The recipe of a scheduler with a recipe target (checked when it was loaded). */
export function recipeOf(scheduler: EffectiveScheduler): RecipeDefinition {
  if (scheduler.recipe === undefined)
    throw new Error(`scheduler ${scheduler.document.path} has no recipe target`);
  return scheduler.recipe;
}

/** A scheduler document that could not be loaded, with every reason. */
export interface LoadFailure {
  readonly tenant: string;
  readonly project: string;
  readonly path: string;
  readonly name: string;
  /** The document's version and author: an invalid document is reported to its author once per version. */
  readonly version: number;
  readonly createdBy: string;
  readonly message: string;
  readonly issues: readonly ValidationIssue[];
}

/**
 * The workflow document `name` for a project: the project's own, else `_tenant`'s (decisions §2).
 *
 * Its templates are checked within `limits` (the defaults when absent, issue #19).
 *
 * @throws UrsaError `WORKFLOW_NOT_FOUND` when neither has it; `WORKFLOW_INVALID` when it is broken.
 */
export async function findWorkflow(
  repos: Repositories,
  tenant: string,
  project: string,
  name: string,
  limits?: TemplateLimits,
): Promise<{ definition: WorkflowDefinition; document: StoredDocument }> {
  const path = workflowPath(name);
  const document =
    (await repos.documents.get({ tenant, project, path })) ??
    (project === TENANT_PROJECT
      ? undefined
      : await repos.documents.get({ tenant, project: TENANT_PROJECT, path }));
  if (document === undefined)
    throw new UrsaError(
      'WORKFLOW_NOT_FOUND',
      `${JSON.stringify(name)} is not a workflow of project ${project} or of _tenant`,
      {
        field: 'workflow',
        value: name,
      },
    );
  const definition = parseWorkflowDocument(document.body, {
    name,
    path: `${document.project}/${document.path}`,
    limits,
  });
  return { definition, document };
}

/** Recipe lookup for a (tenant, project): project → `_tenant` → built-in (decisions §2). */
export async function findRecipe(
  repos: Repositories,
  tenant: string,
  project: string,
  name: string,
): Promise<RecipeDefinition | undefined> {
  const path = recipePath(name);
  const [own, shared] = await Promise.all([
    repos.documents.get({ tenant, project, path }),
    project === TENANT_PROJECT ? undefined : repos.documents.get({ tenant, project: TENANT_PROJECT, path }),
  ]);
  // A broken recipe document is an error of the scheduler that uses it, not a silent fallback.
  const parse = (doc: StoredDocument | undefined, source: 'project' | 'tenant') =>
    doc === undefined
      ? undefined
      : parseRecipeDocument(doc.body, { name, path: `${doc.project}/${doc.path}`, source });
  return resolveRecipe(name, {
    project: () => parse(own, project === TENANT_PROJECT ? 'tenant' : 'project'),
    tenant: () => parse(shared, 'tenant'),
    builtin: () => builtinRecipe(name),
  });
}

/**
 * Lookups the checks of one refresh share (issue #11): each recipe of a project and each user is
 * read once per refresh, not once per scheduler that names it. Keys are `tenant\0project\0recipe`
 * and `tenant\0user`; values the pending lookups (a failed one fails every scheduler naming it).
 */
export interface CheckLookups {
  readonly recipes: Map<string, Promise<RecipeDefinition | undefined>>;
  readonly users: Map<string, Promise<boolean>>;
}

/** Fresh, empty {@link CheckLookups}, for one refresh. */
export function checkLookups(): CheckLookups {
  return { recipes: new Map(), users: new Map() };
}

function memo<T>(
  cache: Map<string, Promise<T>> | undefined,
  key: string,
  load: () => Promise<T>,
): Promise<T> {
  if (cache === undefined) return load();
  let pending = cache.get(key);
  if (pending === undefined) {
    pending = load();
    cache.set(key, pending);
  }
  return pending;
}

function issuesOf(error: UrsaError): readonly ValidationIssue[] {
  return error.issues ?? [{ path: error.field ?? '', message: error.message }];
}

/** What {@link checkScheduler} makes of a valid scheduler document. */
export type CheckedScheduler = {
  readonly definition: SchedulerDefinition;
  /** The user runs go out as: `runAs`, else the document's `createdBy` (spec §2). */
  readonly runAs: string;
} & ResolvedTarget;

/**
 * What a checked scheduler's target resolved to when it was checked, one of two: a recipe target's
 * recipe (project → `_tenant` → built-in), or a workflow target's workflow (project → `_tenant`,
 * spec §4.2).
 */
export type ResolvedTarget =
  | { readonly recipe: RecipeDefinition; readonly workflow?: undefined }
  | { readonly workflow: WorkflowDefinition; readonly recipe?: undefined };

/**
 * Parses and checks one scheduler document for the project it fires in: the document itself
 * (spec §2), its recipe (it must resolve) and its user (`runAs` must exist).
 *
 * @throws UrsaError `SCHEDULER_INVALID`, `RECIPE_NOT_FOUND`, `RECIPE_INVALID` or `USER_NOT_FOUND`.
 */
export async function checkScheduler(
  repos: Repositories,
  project: string,
  document: StoredDocument,
  /** A user known to exist without looking (the caller of a write, whom the write registers). */
  knownUser?: string,
  /** Lookups shared with the other checks of the same refresh. */
  lookups?: CheckLookups,
): Promise<CheckedScheduler> {
  const definition = parseSchedulerDocument(document.body, {
    name: schedulerNameFromPath(document.path),
    path: `${document.project}/${document.path}`,
  });
  return checkReferences(repos, project, document, definition, knownUser, lookups);
}

/**
 * The second half of {@link checkScheduler}, for a document already parsed into `definition`:
 * its recipe or workflow must resolve for `project` and its user must exist.
 *
 * @throws UrsaError `RECIPE_NOT_FOUND`, `RECIPE_INVALID`, `WORKFLOW_NOT_FOUND`, `WORKFLOW_INVALID`
 *   or `USER_NOT_FOUND`.
 */
export async function checkReferences(
  repos: Repositories,
  project: string,
  document: DocumentHead,
  definition: SchedulerDefinition,
  knownUser?: string,
  lookups?: CheckLookups,
): Promise<CheckedScheduler> {
  const source = `${document.project}/${document.path}`;
  const refuse = (
    code: 'RECIPE_NOT_FOUND' | 'USER_NOT_FOUND' | 'SCHEDULER_INVALID',
    field: string,
    value: string,
    reason: string,
  ) =>
    new UrsaError(code, `${source}: ${field}: ${reason}`, {
      field,
      value,
      issues: [{ path: field, message: reason }],
    });
  const runAs = definition.runAs ?? document.createdBy;
  const checkUser = async () => {
    const exists = () =>
      memo(
        lookups?.users,
        `${document.tenant}\u0000${runAs}`,
        async () => (await repos.users.get(document.tenant, runAs)) !== undefined,
      );
    if (runAs !== knownUser && !(await exists())) {
      throw refuse(
        'USER_NOT_FOUND',
        'runAs',
        runAs,
        `no user ${JSON.stringify(runAs)} in tenant ${document.tenant} (add one with apply --as, or name an existing user)`,
      );
    }
  };
  if (definition.target.kind === 'workflow') {
    const { definition: workflow } = await findWorkflow(
      repos,
      document.tenant,
      project,
      definition.target.workflow,
    );
    await checkUser();
    return { definition, runAs, workflow };
  }
  const recipeName = definition.target.recipe;
  const recipe = await memo(lookups?.recipes, `${document.tenant}\u0000${project}\u0000${recipeName}`, () =>
    findRecipe(repos, document.tenant, project, recipeName),
  );
  if (recipe === undefined) {
    throw refuse(
      'RECIPE_NOT_FOUND',
      'recipe',
      recipeName,
      `${JSON.stringify(recipeName)} is not a recipe of project ${project}, of _tenant, or built in`,
    );
  }
  await checkUser();
  return { definition, runAs, recipe };
}

/** A document's head: the document without its body (see {@link EffectiveScheduler.document}). */
export function headOf(document: DocumentHead): DocumentHead {
  const { tenant, project, path, version, createdBy } = document;
  return { tenant, project, path, version, createdBy };
}

/**
 * The scheduler documents of a project after the cascade (spec §3), by name: its own
 * `_vance/scheduler/*.yaml` and the tenant's, a project document replacing a tenant one of the
 * same name. Heads only: no body is read.
 */
export async function projectSchedulerHeads(
  repos: Repositories,
  tenant: string,
  project: string,
  /** The `_tenant` heads when the caller already has them (one read per tenant, not per project). */
  shared?: readonly DocumentHead[],
): Promise<Map<string, { document: DocumentHead; source: 'project' | 'tenant' }>> {
  const [own, tenantHeads] = await Promise.all([
    repos.documents.heads(tenant, project, SCHEDULER_PREFIX),
    project === TENANT_PROJECT
      ? []
      : (shared ?? repos.documents.heads(tenant, TENANT_PROJECT, SCHEDULER_PREFIX)),
  ]);
  const byName = new Map<string, { document: DocumentHead; source: 'project' | 'tenant' }>();
  for (const document of tenantHeads)
    byName.set(schedulerNameFromPath(document.path), { document, source: 'tenant' });
  for (const document of own)
    byName.set(schedulerNameFromPath(document.path), { document, source: 'project' });
  return byName;
}

/**
 * The schedulers of a project after the cascade (spec §3): the union of its own
 * `_vance/scheduler/*.yaml` and the tenant's, a project document replacing a tenant one of the
 * same name whole. Broken documents are reported in `failures` and never stop the others.
 * With `names`, only the schedulers of those names are read and checked (a delta refresh, or the
 * documents a bootstrap found changed, issue #11).
 *
 * @throws the store's errors (`STORE_BUSY`, `STORE_UNAVAILABLE`, …) and anything else that is not
 *   Ursa's refusal of a document (see `isRefusal`), also when met checking one scheduler: a
 *   document is reported broken only for what is known about it (issue #20).
 */
export async function loadProjectSchedulers(
  repos: Repositories,
  tenant: string,
  project: string,
  names?: ReadonlySet<string>,
): Promise<{ schedulers: Map<string, EffectiveScheduler>; failures: LoadFailure[] }> {
  const byName = new Map<string, { document: StoredDocument; source: 'project' | 'tenant' }>();
  if (names === undefined) {
    const [own, shared] = await Promise.all([
      repos.documents.list(tenant, project, SCHEDULER_PREFIX),
      project === TENANT_PROJECT ? [] : repos.documents.list(tenant, TENANT_PROJECT, SCHEDULER_PREFIX),
    ]);
    for (const document of shared)
      byName.set(schedulerNameFromPath(document.path), { document, source: 'tenant' });
    for (const document of own)
      byName.set(schedulerNameFromPath(document.path), { document, source: 'project' });
  } else if (names.size > 0) {
    const heads = [...(await projectSchedulerHeads(repos, tenant, project))].filter(([name]) =>
      names.has(name),
    );
    const bodies = await repos.documents.getMany(heads.map(([, { document }]) => document));
    for (const [name, { document, source }] of heads) {
      const stored = bodies.get(documentKeyString(document));
      if (stored !== undefined) byName.set(name, { document: stored, source });
    }
  }

  const schedulers = new Map<string, EffectiveScheduler>();
  const failures: LoadFailure[] = [];
  const lookups = checkLookups();
  for (const [name, { document, source }] of byName) {
    try {
      const checked = await checkScheduler(repos, project, document, undefined, lookups);
      schedulers.set(name, { ...checked, source, document: headOf(document) });
    } catch (error) {
      if (!isRefusal(error)) throw error;
      failures.push({
        tenant,
        project: document.project,
        path: document.path,
        name,
        version: document.version,
        createdBy: document.createdBy,
        message: error.message,
        issues: issuesOf(error),
      });
    }
  }
  return { schedulers, failures };
}

/**
 * The active projects (spec §3, decisions §2): those holding scheduler documents of their own or
 * pinned (`lifecycleType: PERMANENT`), less those an operator suspended. Tenant schedulers fire in
 * these and no other.
 */
export async function activeProjects(repos: Repositories): Promise<{ tenant: string; project: string }[]> {
  const own = await repos.store.db
    .selectFrom('documents')
    .select(['tenant', 'project'])
    .distinct()
    .where('project', '!=', TENANT_PROJECT)
    .where((eb) =>
      eb(eb.fn('substr', ['path', eb.val(1), eb.val(SCHEDULER_PREFIX.length)]), '=', SCHEDULER_PREFIX),
    )
    .execute();
  const pinned = await repos.settings.projectsWith('lifecycleType', 'PERMANENT');
  const suspended = new Set((await repos.projects.suspended()).map((p) => `${p.tenant}\u0000${p.project}`));
  const active = new Map<string, { tenant: string; project: string }>();
  for (const p of [...own, ...pinned]) {
    const key = `${p.tenant}\u0000${p.project}`;
    if (p.project !== TENANT_PROJECT && !suspended.has(key))
      active.set(key, { tenant: p.tenant, project: p.project });
  }
  return [...active.values()].sort((a, b) => (a.tenant + a.project < b.tenant + b.project ? -1 : 1));
}

/** Whether one project is active (see {@link activeProjects}). */
export async function isProjectActive(
  repos: Repositories,
  tenant: string,
  project: string,
): Promise<boolean> {
  if (project === TENANT_PROJECT || (await repos.projects.isSuspended(tenant, project))) return false;
  if ((await repos.settings.get(tenant, 'project', project, 'lifecycleType')) === 'PERMANENT') return true;
  return (await repos.documents.heads(tenant, project, SCHEDULER_PREFIX)).length > 0;
}
