import type { FastifyInstance } from 'fastify';

/**
 * Every route Fastify has, as `METHOD /path/{param}` (HEAD left out, a wildcard as `{*}`), from
 * printRoutes, sorted: tests that must cover each route iterate this, so a route added later is
 * covered without editing them.
 */
export function registeredRoutes(app: FastifyInstance): string[] {
  const out: string[] = [];
  const stack: { depth: number; path: string }[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│├└─\s]*)(\S.*?) \(([A-Z, ]+)\)$/.exec(line);
    if (match === null) continue;
    const depth = (match[1] as string).length;
    while (stack.length > 0 && (stack[stack.length - 1] as { depth: number }).depth >= depth) stack.pop();
    const parent = stack[stack.length - 1]?.path ?? '';
    // find-my-way prints the wildcard of `/documents/*` as a child `*` of `/documents`.
    const segment = match[2] as string;
    const path = segment === '*' && !parent.endsWith('/') ? `${parent}/*` : `${parent}${segment}`;
    stack.push({ depth, path });
    for (const method of (match[3] as string).split(', ')) {
      if (method !== 'HEAD') out.push(`${method} ${path.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{*}')}`);
    }
  }
  return out.sort();
}
