import { z } from 'zod';
import { durationField, nonBlankString, paramsField } from '../scheduler/fields.js';
import { describeValue } from '../yaml/issues.js';
import { headersField, httpUrlField, secretHeadersField } from './http-fields.js';

/** Engines Ursa ships (decisions §2); library users may register more under other names. */
export const BUILTIN_ENGINES: readonly string[] = ['shell', 'http', 'noop', 'agent'];

/** `command:`: the argv list the `shell` engine runs; never a shell string (decisions §6). */
const commandField = z
  .array(nonBlankString, {
    error: (issue) =>
      issue.code === 'invalid_type' && typeof issue.input === 'string'
        ? `expected a list of arguments (argv), found ${describeValue(issue.input)}; a shell command string is not accepted`
        : undefined,
  })
  .min(1, 'must hold at least the program to run');

/**
 * The recipe document's fields (decisions §2, issue #5) with their types and defaults. Strict: any
 * other field is an error. The rules tying `command` (shell), `url`, `headers`, `secretHeaders`
 * (http, agent) and `heartbeatTimeout` (agent, issue #25) to `engine` are checked beside it, in
 * `parse.ts`.
 */
export const recipeSchema = z.strictObject({
  description: nonBlankString,
  engine: nonBlankString,
  params: paramsField,
  command: commandField.optional(),
  url: httpUrlField.optional(),
  headers: headersField.optional(),
  secretHeaders: secretHeadersField.optional(),
  timeout: durationField.optional(),
  heartbeatTimeout: durationField.optional(),
});

/** The recipe document's fields in schema order. */
export const RECIPE_FIELDS: readonly string[] = Object.keys(recipeSchema.shape);

/** A recipe document that passed {@link recipeSchema}, defaults applied. */
export type RecipeFields = z.output<typeof recipeSchema>;
