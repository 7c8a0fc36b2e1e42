import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { checkScheduler } from '../catalog/catalog.js';
import { isRefusal, UrsaError, type ValidationIssue } from '../errors/index.js';
import { parseRecipeDocument } from '../recipes/parse.js';
import { RECIPE_PREFIX } from '../recipes/paths.js';
import type { Runtime } from '../runtime/context.js';
import { refreshProject, refreshTenant } from '../runtime/registrar.js';
import { SCHEDULER_PREFIX, schedulerNameFromPath, validateName } from '../scheduler/document.js';
import type { Actor } from '../store/audit.js';
import { type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
import { parseWorkflowDocument } from '../workflows/parse.js';
import { WORKFLOW_PREFIX } from '../workflows/paths.js';
import { WORKFLOWS_OFF_WARNING } from './schedulers.js';

/** What happened to one file of an apply. */
export interface ApplyEntry {
  /** Path inside the project, e.g. `_vance/scheduler/heartbeat.yaml`. */
  readonly path: string;
  readonly status: 'created' | 'updated' | 'unchanged' | 'invalid' | 'ignored';
  readonly message?: string;
  readonly issues?: readonly ValidationIssue[];
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) return yamlFiles(full);
      return entry.isFile() && entry.name.endsWith('.yaml') ? [full] : [];
    })
    .sort();
}

function issuesOf(error: UrsaError): readonly ValidationIssue[] {
  return error.issues ?? [{ path: error.field ?? '', message: error.message }];
}

/**
 * Loads the `*.yaml` files of a folder laid out like a project (`_vance/recipes/…`,
 * `_vance/workflows/…`, `_vance/scheduler/…`) into (tenant, project), as `actor` (the creator of
 * new documents and the writer in the audit trail). Every document is validated; the valid ones
 * are written (recipes and workflows first, so schedulers can name them) and the broken ones are
 * reported, each with its field paths — one broken document never stops the others. A workflow scheduler written while the operator switched
 * workflows off carries that warning as its message. Ends with a refresh of the project (spec §8).
 *
 * @throws UrsaError `ARGUMENT_INVALID` when `dir` is not a folder.
 */
export async function applyDirectory(
  rt: Runtime,
  dir: string,
  tenant: string,
  project: string,
  actor: Actor,
): Promise<ApplyEntry[]> {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UrsaError('ARGUMENT_INVALID', `dir: ${JSON.stringify(dir)} is not a folder`, {
      field: 'dir',
      value: dir,
    });
  }
  const now = rt.clock.now();
  await rt.repos.users.ensure(tenant, actor.user, now);
  const files = yamlFiles(dir).map((file) => ({ file, path: relative(dir, file).split(sep).join('/') }));
  const entries: ApplyEntry[] = [];
  const recipes = files.filter((f) => f.path.startsWith(RECIPE_PREFIX));
  const workflows = files.filter((f) => f.path.startsWith(WORKFLOW_PREFIX));
  const schedulers = files.filter((f) => f.path.startsWith(SCHEDULER_PREFIX));
  for (const f of files) {
    if (!recipes.includes(f) && !workflows.includes(f) && !schedulers.includes(f)) {
      entries.push({
        path: f.path,
        status: 'ignored',
        message: `not under ${RECIPE_PREFIX}, ${WORKFLOW_PREFIX} or ${SCHEDULER_PREFIX}`,
      });
    }
  }
  // Recipes, then workflows (their steps name recipes), then schedulers (they name either).
  for (const { file, path } of [...recipes, ...workflows]) {
    const body = readFileSync(file, 'utf8');
    try {
      if (path.startsWith(RECIPE_PREFIX)) {
        const name = validateName(path.slice(RECIPE_PREFIX.length, -'.yaml'.length));
        const { secretHosts } = rt.settings;
        parseRecipeDocument(body, {
          name,
          path,
          source: 'project',
          ...(secretHosts ? { secretHosts } : {}),
          // An agent recipe needs somewhere to be called back (issue #25).
          publicUrl: rt.settings.publicUrl || null,
        });
      } else {
        const name = validateName(path.slice(WORKFLOW_PREFIX.length, -'.yaml'.length));
        parseWorkflowDocument(body, { name, path, limits: rt.settings.templateLimits });
      }
    } catch (error) {
      if (!isRefusal(error)) throw error;
      entries.push({ path, status: 'invalid', message: error.message, issues: issuesOf(error) });
      continue;
    }
    const unchanged = (await rt.repos.documents.get({ tenant, project, path }))?.body === body;
    const { created } = await rt.repos.documents.put({ tenant, project, path }, body, actor, now);
    entries.push({ path, status: created ? 'created' : unchanged ? 'unchanged' : 'updated' });
  }
  for (const { file, path } of schedulers) {
    const body = readFileSync(file, 'utf8');
    const existing = await rt.repos.documents.get({ tenant, project, path });
    const candidate: StoredDocument = {
      tenant,
      project,
      path,
      body,
      createdBy: existing?.createdBy ?? actor.user,
      version: (existing?.version ?? 0) + 1,
      createdAt: now,
      updatedAt: now,
      expiresAt: null,
    };
    let workflowTarget: boolean;
    try {
      validateName(schedulerNameFromPath(path));
      workflowTarget = (await checkScheduler(rt.repos, project, candidate)).workflow !== undefined;
    } catch (error) {
      if (!isRefusal(error)) throw error;
      entries.push({ path, status: 'invalid', message: error.message, issues: issuesOf(error) });
      continue;
    }
    const unchanged = existing?.body === body;
    const { created } = await rt.repos.documents.put({ tenant, project, path }, body, actor, now);
    entries.push({
      path,
      status: created ? 'created' : unchanged ? 'unchanged' : 'updated',
      ...(workflowTarget && rt.settings.workflowsEnabled === false ? { message: WORKFLOWS_OFF_WARNING } : {}),
    });
  }
  // Tenant schedulers fire in every active project (spec §3): each of them picks them up now.
  if (project === TENANT_PROJECT) await refreshTenant(rt, tenant, { asOf: now });
  else await refreshProject(rt, tenant, project);
  return entries;
}
