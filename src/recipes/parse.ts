import type { ValidationIssue } from '../errors/index.js';
import { urlHost } from '../net/host-pattern.js';
import { type SecretHosts, secretHostRefusal } from '../net/secret-hosts.js';
import { validateName } from '../scheduler/name.js';
import { appendField } from '../yaml/field-path.js';
import { fromZodIssues, issueMessage, sortIssues } from '../yaml/issues.js';
import { loadYamlDocument } from '../yaml/load.js';
import { documentRefused } from '../yaml/report.js';
import { httpUrlProblem } from './http-fields.js';
import type { RecipeDefinition } from './recipe.js';
import { BUILTIN_ENGINES, RECIPE_FIELDS, recipeSchema } from './schema.js';

/** Which recipe a document is and where it was found. */
export interface RecipeDocumentOptions {
  /** The recipe name (file name without `.yaml`); must follow the name rule of decisions §6. */
  readonly name: string;
  /** The document path, e.g. `_vance/recipes/backup.yaml`; every message starts with it. */
  readonly path: string;
  /** The cascade level the document was read from (decisions §2). */
  readonly source: 'project' | 'tenant';
  /**
   * The operator's secret bindings (`secretHosts`, issue #19), when the document is being written:
   * a secret header whose variable is bound to other hosts than the url's is refused at
   * `secretHeaders.<name>`. Absent when a stored recipe is read for a run: the engine checks then.
   */
  readonly secretHosts?: SecretHosts;
  /**
   * The server's `publicUrl` (issue #25), when the document is being written: `null` when none is
   * configured, and then an `agent` recipe is refused at `engine`, since its service could never
   * call back. Absent when a stored recipe is read for a run.
   */
  readonly publicUrl?: string | null;
}

/** A validated recipe, or every reason the document was refused. */
export type RecipeValidation =
  | { readonly ok: true; readonly recipe: RecipeDefinition }
  | { readonly ok: false; readonly issues: ValidationIssue[] };

const EMPTY = 'the document is empty; expected a mapping with description and engine';

/** `command` belongs to the `shell` engine: required there, refused for the other built-in engines. */
function commandRule(document: Readonly<Record<string, unknown>>): ValidationIssue[] {
  const { engine, command } = document;
  if (typeof engine !== 'string') return [];
  const hasCommand = command !== undefined && command !== null;
  if (engine === 'shell' && !hasCommand) {
    return [
      {
        path: 'command',
        message:
          'is required when engine is shell: the argv list to run, e.g. [/usr/local/bin/backup, --full]',
      },
    ];
  }
  if (engine !== 'shell' && hasCommand && BUILTIN_ENGINES.includes(engine)) {
    return [
      {
        path: 'command',
        message: `is only for the shell engine; engine ${JSON.stringify(engine)} takes none`,
      },
    ];
  }
  return [];
}

/** The fields only the `http` and `agent` engines take (issues #5, #25). */
const HTTP_FIELDS = ['url', 'headers', 'secretHeaders'] as const;
/** The built-in engines that POST to a `url` (issues #5, #25). */
const URL_ENGINES: readonly string[] = ['http', 'agent'];

/**
 * `url`, `headers` and `secretHeaders` belong to the `http` engine (issue #5): `url` is required
 * there, all three are refused for the other built-in engines (an engine registered by a library
 * user may take them, as it may take `command`). A header given in both `headers` and
 * `secretHeaders` (names compared case-insensitively) is refused at `secretHeaders.<name>`.
 */
function httpRule(document: Readonly<Record<string, unknown>>): ValidationIssue[] {
  const { engine, url, headers, secretHeaders } = document;
  if (typeof engine !== 'string') return [];
  const present = (value: unknown): boolean => value !== undefined && value !== null;
  const issues: ValidationIssue[] = [];
  if (URL_ENGINES.includes(engine) && !present(url)) {
    issues.push({
      path: 'url',
      message: `is required when engine is ${engine}: the absolute http:// or https:// URL to POST to, e.g. https://hooks.example.com/briefing`,
    });
  }
  if (!URL_ENGINES.includes(engine) && BUILTIN_ENGINES.includes(engine)) {
    for (const field of HTTP_FIELDS) {
      if (present(document[field])) {
        issues.push({
          path: field,
          message: `is only for the http and agent engines; engine ${JSON.stringify(engine)} takes none`,
        });
      }
    }
  }
  if (isMapping(headers) && isMapping(secretHeaders)) {
    const literal = new Map<string, string>();
    for (const name of Object.keys(headers)) {
      if (!literal.has(name.toLowerCase())) literal.set(name.toLowerCase(), name);
    }
    for (const name of Object.keys(secretHeaders)) {
      const other = literal.get(name.toLowerCase());
      if (other === undefined) continue;
      issues.push({
        path: appendField('secretHeaders', name),
        message: `is also in headers (as ${JSON.stringify(other)}); give each header once`,
      });
    }
  }
  return issues;
}

/**
 * A secret header whose variable `secretHosts` binds to other hosts than the host of `url` is
 * refused at `secretHeaders.<name>`, naming the variable, its hosts and the url's host (issue #19).
 * Nothing to say when the url itself is refused: that has its own issue.
 */
function secretHostRule(
  document: Readonly<Record<string, unknown>>,
  secretHosts: SecretHosts,
): ValidationIssue[] {
  const { url, secretHeaders } = document;
  if (typeof url !== 'string' || httpUrlProblem(url) !== undefined || !isMapping(secretHeaders)) return [];
  const host = urlHost(new URL(url));
  return Object.entries(secretHeaders).flatMap(([name, variable]) => {
    const refusal = typeof variable === 'string' ? secretHostRefusal(secretHosts, variable, host) : undefined;
    return refusal === undefined ? [] : [{ path: appendField('secretHeaders', name), message: refusal }];
  });
}

/**
 * `heartbeatTimeout` belongs to the `agent` engine (issue #25): required there, refused for the
 * other built-in engines. Written with no `publicUrl` configured (`publicUrl: null`), an agent
 * recipe is refused at `engine`: its service would have nowhere to call back.
 */
function agentRule(
  document: Readonly<Record<string, unknown>>,
  publicUrl: string | null | undefined,
): ValidationIssue[] {
  const { engine, heartbeatTimeout } = document;
  if (typeof engine !== 'string') return [];
  const present = heartbeatTimeout !== undefined && heartbeatTimeout !== null;
  const issues: ValidationIssue[] = [];
  if (engine === 'agent' && !present) {
    issues.push({
      path: 'heartbeatTimeout',
      message:
        'is required when engine is agent: how long the agent service may stay silent before the run fails, an ISO-8601 duration such as PT5M',
    });
  }
  if (engine !== 'agent' && present && BUILTIN_ENGINES.includes(engine)) {
    issues.push({
      path: 'heartbeatTimeout',
      message: `is only for the agent engine; engine ${JSON.stringify(engine)} takes none`,
    });
  }
  if (engine === 'agent' && (publicUrl === null || publicUrl === '')) {
    issues.push({
      path: 'engine',
      message:
        'agent needs the server to have a public URL for the callbacks of agent services (operator setting publicUrl, URSA_PUBLIC_URL), and none is configured',
    });
  }
  return issues;
}

function isMapping(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates a recipe document already read into plain values (decisions §2, issue #5):
 * `description` (required), `engine` (required), `params` (mapping, default {}), `command` (argv
 * list, required for `shell`, refused for `http` and `noop`), `url` (absolute http:// or https://
 * URL without credentials, required for `http` and `agent`), `headers` (header name → literal
 * value) and `secretHeaders` (header name → environment variable name), all three refused for
 * `shell` and `noop`, `timeout` (ISO-8601 duration of fixed length), `heartbeatTimeout` (the same,
 * required for `agent` and refused for the other built-in engines, issue #25). Strict: other
 * fields are refused. With `options.secretHosts`, a secret header bound to other hosts than the
 * url's is refused; with `options.publicUrl` null, an `agent` recipe is refused.
 * Collects every issue.
 *
 * @throws UrsaError `NAME_INVALID` when `options.name` breaks the name rule (decisions §6).
 */
export function validateRecipeObject(value: unknown, options: RecipeDocumentOptions): RecipeValidation {
  const name = validateName(options.name, 'recipe name');
  if (value === null || value === undefined) return { ok: false, issues: [{ path: '', message: EMPTY }] };
  const issues: ValidationIssue[] = [];
  if (isMapping(value)) {
    issues.push(
      ...commandRule(value),
      ...httpRule(value),
      ...agentRule(value, options.publicUrl),
      ...secretHostRule(value, options.secretHosts ?? {}),
    );
  }
  const parsed = recipeSchema.safeParse(value, { error: issueMessage });
  if (!parsed.success) issues.push(...fromZodIssues(parsed.error.issues, recipeSchema));
  if (!parsed.success || issues.length > 0) return { ok: false, issues: sortIssues(issues, RECIPE_FIELDS) };
  const { description, engine, params, command, url, headers, secretHeaders, timeout, heartbeatTimeout } =
    parsed.data;
  return {
    ok: true,
    recipe: {
      name,
      description,
      engine,
      params,
      command,
      url,
      headers,
      secretHeaders,
      timeoutMs: timeout?.ms,
      ...(heartbeatTimeout === undefined ? {} : { heartbeatTimeoutMs: heartbeatTimeout.ms }),
      source: options.source,
    },
  };
}

/**
 * {@link validateRecipeObject} that throws.
 *
 * @throws UrsaError `RECIPE_INVALID` whose message has one line per issue,
 *   `<path>: <field path>: <reason>`, with `field` (first issue) and `issues`; `NAME_INVALID`.
 */
export function recipeFromObject(value: unknown, options: RecipeDocumentOptions): RecipeDefinition {
  const result = validateRecipeObject(value, options);
  if (!result.ok) throw documentRefused('RECIPE_INVALID', options.path, result.issues);
  return result.recipe;
}

/**
 * Loads and validates a recipe document's YAML text without throwing for bad input (a YAML
 * refusal gives its one issue).
 *
 * @throws UrsaError `NAME_INVALID` when `options.name` breaks the name rule (decisions §6).
 */
export function validateRecipeDocument(text: string, options: RecipeDocumentOptions): RecipeValidation {
  validateName(options.name, 'recipe name');
  const loaded = loadYamlDocument(text, options.path);
  if (!loaded.ok) return { ok: false, issues: loaded.issues };
  return validateRecipeObject(loaded.value, options);
}

/**
 * Loads and validates a recipe document `_vance/recipes/<name>.yaml` (decisions §2, §6).
 *
 * @throws UrsaError `DOCUMENT_INVALID` when the YAML itself is refused (see `parseYamlDocument`),
 *   `RECIPE_INVALID` listing every schema issue, `NAME_INVALID` for a bad `options.name`.
 */
export function parseRecipeDocument(text: string, options: RecipeDocumentOptions): RecipeDefinition {
  validateName(options.name, 'recipe name');
  const loaded = loadYamlDocument(text, options.path);
  if (!loaded.ok) throw loaded.error;
  return recipeFromObject(loaded.value, options);
}
