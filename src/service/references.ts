import { findRecipe, findWorkflow } from '../catalog/catalog.js';
import { didYouMean } from '../errors/did-you-mean.js';
import { isRefusal, type RefusalCode, type UrsaError } from '../errors/index.js';
import { BUILTIN_RECIPES, RECIPE_PREFIX } from '../recipes/index.js';
import type { RecipeDefinition } from '../recipes/recipe.js';
import type { Runtime } from '../runtime/context.js';
import type { SchedulerDefinition } from '../scheduler/definition.js';
import { TENANT_PROJECT } from '../store/index.js';
import { WORKFLOW_PREFIX } from '../workflows/paths.js';

/**
 * A name a document gives that the store does not know (issue #23, `ursa validate` with a store):
 * the error code it would be refused or fail with, the field path, the value and why, with the
 * near miss when there is one.
 */
export interface ReferenceProblem {
  readonly code: RefusalCode;
  readonly path: string;
  readonly value: string;
  readonly message: string;
}

function refused(error: UrsaError, path: string, value: string, hint: string): ReferenceProblem {
  // isRefusal let only a refusal through: its code is a refusal code.
  return { code: error.code as RefusalCode, path, value, message: `${error.message}${hint}` };
}

/** The names of the documents under `prefix` in the project and in `_tenant`, without `.yaml`. */
async function documentNames(
  rt: Runtime,
  tenant: string,
  project: string,
  prefix: string,
): Promise<string[]> {
  const projects = project === TENANT_PROJECT ? [project] : [project, TENANT_PROJECT];
  const heads = await Promise.all(projects.map((p) => rt.repos.documents.heads(tenant, p, prefix)));
  return heads.flat().map((head) => head.path.slice(prefix.length).replace(/\.yaml$/, ''));
}

/**
 * The engine a recipe runs on, when this Ursa has none of that name (the built-in `shell`, `http`
 * and `noop`, and those the configuration or a library user registered): it would fail at its
 * first run. Null when the engine is there.
 */
export function engineProblem(rt: Runtime, recipe: RecipeDefinition, path: string): ReferenceProblem | null {
  if (rt.engines.get(recipe.engine) !== undefined) return null;
  const engines = rt.engines.names();
  return {
    code: 'ENGINE_NOT_FOUND',
    path,
    value: recipe.engine,
    message: `recipe ${JSON.stringify(recipe.name)} runs on engine ${JSON.stringify(recipe.engine)}, which this Ursa does not have${didYouMean(recipe.engine, engines)}; the engines are ${engines.join(', ')}`,
  };
}

/**
 * What a scheduler document names that (tenant, project) does not have: its `runAs` user (when
 * given; without one, whoever writes it becomes it), its recipe (project → `_tenant` → built in)
 * and that recipe's engine, or its workflow. Each with the near miss when there is one. Reads only.
 *
 * @throws the store's errors; a broken recipe or workflow document is a problem, not a throw.
 */
export async function schedulerReferenceProblems(
  rt: Runtime,
  tenant: string,
  project: string,
  definition: SchedulerDefinition,
): Promise<ReferenceProblem[]> {
  const problems: ReferenceProblem[] = [];
  const { runAs, target } = definition;
  if (runAs !== undefined && (await rt.repos.users.get(tenant, runAs)) === undefined) {
    const users = (await rt.repos.users.list(tenant)).map((u) => u.name);
    problems.push({
      code: 'USER_NOT_FOUND',
      path: 'runAs',
      value: runAs,
      message: `no user ${JSON.stringify(runAs)} in tenant ${tenant}${didYouMean(runAs, users)} (add one with apply --as or user add, or name an existing user)`,
    });
  }
  if (target.kind === 'workflow') {
    try {
      await findWorkflow(rt.repos, tenant, project, target.workflow);
    } catch (error) {
      if (!isRefusal(error)) throw error;
      const names =
        error.code === 'WORKFLOW_NOT_FOUND' ? await documentNames(rt, tenant, project, WORKFLOW_PREFIX) : [];
      problems.push(refused(error, 'workflow', target.workflow, didYouMean(target.workflow, names)));
    }
    return problems;
  }
  let recipe: RecipeDefinition | undefined;
  try {
    recipe = await findRecipe(rt.repos, tenant, project, target.recipe);
  } catch (error) {
    // A broken recipe document (RECIPE_INVALID) fails every run of the scheduler.
    if (!isRefusal(error)) throw error;
    return [...problems, refused(error, 'recipe', target.recipe, '')];
  }
  if (recipe === undefined) {
    const names = [...(await documentNames(rt, tenant, project, RECIPE_PREFIX)), ...BUILTIN_RECIPES.keys()];
    problems.push({
      code: 'RECIPE_NOT_FOUND',
      path: 'recipe',
      value: target.recipe,
      message: `${JSON.stringify(target.recipe)} is not a recipe of ${tenant}/${project}, of _tenant, or built in${didYouMean(target.recipe, names)}`,
    });
    return problems;
  }
  const engine = engineProblem(rt, recipe, 'recipe');
  if (engine !== null) problems.push(engine);
  return problems;
}
