import { UrsaError } from '../errors/index.js';

/** The name rule of decisions §6 as a pattern (the whole name must match). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The name rule in words, for messages. */
export const NAME_RULE =
  '1 to 128 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, without ".." ([A-Za-z0-9][A-Za-z0-9._-]{0,127})';

/**
 * True when `name` may name a scheduler, recipe or workflow document (decisions §6):
 * {@link NAME_PATTERN}, and no `..` anywhere, so a name is always one safe path segment.
 */
export function isValidName(name: unknown): name is string {
  return typeof name === 'string' && NAME_PATTERN.test(name) && !name.includes('..');
}

function shown(name: unknown): string {
  if (typeof name !== 'string') return String(name);
  const text = name.length > 60 ? `${name.slice(0, 60)}…` : name;
  const length = name.length > 60 ? ` (${name.length} characters)` : '';
  return `${JSON.stringify(text)}${length}`;
}

/**
 * Checks a scheduler, recipe or workflow name against the rule of decisions §6 and returns it.
 * Names with `/`, `..`, NUL or white space, an empty name and one over 128 characters are refused.
 *
 * @param what how the message calls the name, e.g. `scheduler name`.
 * @throws UrsaError `NAME_INVALID` naming the value and the rule (`value`, `allowed` set).
 */
export function validateName(name: string, what = 'name'): string {
  if (isValidName(name)) return name;
  throw new UrsaError('NAME_INVALID', `${what} ${shown(name)} is not allowed: a name is ${NAME_RULE}`, {
    field: 'name',
    value: name,
    allowed: NAME_RULE,
  });
}
