import { Liquid } from 'liquidjs';

/**
 * The reference syntax of workflow step params (issue #10): `${{ params.<name> }}` and
 * `${{ steps.<step>.output }}`, with Liquid filters (`${{ steps.fetch.output | strip }}`).
 * Liquid, not string replacement: a sandboxed expression language with no access to anything
 * but the values given, strict about unknown names and filters. Tags use `${% … %}`, so a
 * literal `{{` or `{%` in a param stays text.
 */
const liquid = new Liquid({
  outputDelimiterLeft: '${{',
  outputDelimiterRight: '}}',
  tagDelimiterLeft: '${%',
  tagDelimiterRight: '%}',
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
});

/** What references may name when a step starts. */
export interface TemplateScope {
  readonly params: Readonly<Record<string, unknown>>;
  /** Earlier steps by name, each with its `output` (text). */
  readonly steps: Readonly<Record<string, { readonly output: string }>>;
}

/**
 * The variables a text refers to, each as its path segments (`['steps', 'fetch', 'output']`).
 *
 * @throws Error (Liquid's parse error) when the text is not a valid template.
 */
export function referencesOf(text: string): string[][] {
  return liquid.variableSegmentsSync(liquid.parse(text)).map((segments) => segments.map(String));
}

/**
 * Renders every string in `value` (recursively through lists and mappings) against `scope`;
 * other values are kept as they are.
 *
 * @throws Error (Liquid's render error) for an unknown name or filter.
 */
export function renderParams(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string')
    return value.includes('${') ? liquid.parseAndRenderSync(value, scope) : value;
  if (Array.isArray(value)) return value.map((item) => renderParams(item, scope));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderParams(v, scope)]));
  return value;
}
