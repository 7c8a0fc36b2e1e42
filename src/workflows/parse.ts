import { z } from 'zod';
import type { TemplateLimits } from '../config/template-limits.js';
import type { ValidationIssue } from '../errors/index.js';
import { nameString, nonBlankString, paramsField } from '../scheduler/fields.js';
import { validateName } from '../scheduler/name.js';
import { fromZodIssues, issueMessage, sortIssues } from '../yaml/issues.js';
import { loadYamlDocument } from '../yaml/load.js';
import { documentRefused } from '../yaml/report.js';
import type { WorkflowDefinition } from './definition.js';
import { checkTemplate, templateStrings } from './template.js';

const stepSchema = z.strictObject({
  name: nameString,
  recipe: nameString,
  params: paramsField,
  initialMessage: z.string().optional(),
});

/**
 * The workflow document's fields (issue #10). Strict: any other field is an error. `parameters`
 * maps each parameter to its default (`~` for one every start must give).
 */
export const workflowSchema = z.strictObject({
  description: nonBlankString,
  parameters: z.record(nameString, z.unknown()).default(() => ({})),
  steps: z.array(stepSchema).min(1, 'must hold at least one step'),
});

const WORKFLOW_FIELDS: readonly string[] = Object.keys(workflowSchema.shape);
const EMPTY = 'the document is empty; expected a mapping with description, parameters and steps';

/**
 * Each step's params must be templates within `limits` that use only the sandbox's tags and
 * filters (issue #19), and their references must name a declared parameter (`params.<name>`) or
 * the `output` of an earlier step (`steps.<name>.output`); step names must be unique.
 */
function referenceIssues(
  workflow: z.output<typeof workflowSchema>,
  limits: TemplateLimits | undefined,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const earlier = new Set<string>();
  for (const [i, step] of workflow.steps.entries()) {
    if (earlier.has(step.name))
      issues.push({
        path: `steps[${i}].name`,
        message: `${JSON.stringify(step.name)} names an earlier step too`,
      });
    for (const { path, text } of templateStrings(step.params, `steps[${i}].params`)) {
      const checked = checkTemplate(text, limits);
      if ('problem' in checked) {
        issues.push({ path, message: checked.problem });
        continue;
      }
      for (const [root, name, field, ...rest] of checked.references) {
        const shown = [root, name, field, ...rest].filter((s) => s !== undefined).join('.');
        if (root === 'params' && name !== undefined && field === undefined && name in workflow.parameters)
          continue;
        if (
          root === 'steps' &&
          name !== undefined &&
          earlier.has(name) &&
          field === 'output' &&
          rest.length === 0
        )
          continue;
        issues.push({
          path,
          message: `refers to ${shown}; allowed are params.<a declared parameter> (${
            Object.keys(workflow.parameters).join(', ') || 'none declared'
          }) and steps.<an earlier step>.output`,
        });
      }
    }
    earlier.add(step.name);
  }
  return issues;
}

/**
 * Parses and validates a workflow document (issue #10): YAML as for every document (duplicate
 * keys, aliases and size are refused by the loader), then the schema, then the templates
 * (within `options.limits`, the defaults when absent) and their references. Collects every issue.
 *
 * @throws UrsaError `WORKFLOW_INVALID` with every issue (field path and reason); `NAME_INVALID`
 *   when `options.name` breaks the name rule (decisions §6).
 */
export function parseWorkflowDocument(
  text: string,
  options: { readonly name: string; readonly path: string; readonly limits?: TemplateLimits | undefined },
): WorkflowDefinition {
  const name = validateName(options.name, 'workflow name');
  const loaded = loadYamlDocument(text, options.path);
  if (!loaded.ok) throw loaded.error;
  if (loaded.value === null || loaded.value === undefined)
    throw documentRefused('WORKFLOW_INVALID', options.path, [{ path: '', message: EMPTY }]);
  const parsed = workflowSchema.safeParse(loaded.value, { error: issueMessage });
  if (!parsed.success)
    throw documentRefused(
      'WORKFLOW_INVALID',
      options.path,
      sortIssues(fromZodIssues(parsed.error.issues, workflowSchema), WORKFLOW_FIELDS),
    );
  const issues = referenceIssues(parsed.data, options.limits);
  if (issues.length > 0) throw documentRefused('WORKFLOW_INVALID', options.path, issues);
  const { description, parameters, steps } = parsed.data;
  return { name, description, parameters, steps };
}
