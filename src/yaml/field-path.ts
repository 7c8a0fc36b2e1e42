const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * The path of a child field: `params.model` for a plain key, `params["a.b"]` for any other key,
 * `tags[2]` for a list index. `parent` is `` for the top level.
 */
export function appendField(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (PLAIN_KEY.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** A field path from its segments (keys and list indexes), as {@link appendField} writes it. */
export function fieldPath(segments: readonly PropertyKey[]): string {
  return segments.reduce<string>(
    (path, segment) => appendField(path, typeof segment === 'number' ? segment : String(segment)),
    '',
  );
}

/** The top-level field of a path: `params` for `params[0][0].x`, `` for ``. */
export function topField(path: string): string {
  return /^(?:\["(?:[^"\\]|\\.)*"\]|[^.[]*)/.exec(path)?.[0] ?? '';
}
