import { canonicalHost, type HostPattern, hostMatches, parseHostPattern } from './host-pattern.js';

/**
 * The name of the environment variable a secret header's value is read from. Only `URSA_SECRET_*`
 * variables: recipes are documents agents may write, and a recipe naming `PGPASSWORD` or
 * `AWS_SECRET_ACCESS_KEY` would post the worker's own secrets to a URL of the author's choosing.
 */
export const SECRET_ENV_NAME = /^URSA_SECRET_[A-Z0-9_]+$/u;

/**
 * The hosts each secret variable may be sent to (operator setting `secretHosts`, issue #19):
 * variable name (`URSA_SECRET_HOOK_TOKEN`) → host patterns (`hooks.example.com`, `*.example.org`).
 * A variable not named here may be sent to any host the outbound policy allows.
 */
export type SecretHosts = Readonly<Record<string, readonly string[]>>;

/**
 * Why the value of `variable` may not be sent to `host` (a URL's host name or IP address), or
 * `undefined` when `bindings` allow it. The reason names the variable, the hosts it is bound to and
 * `host`; never a value. Pure.
 */
export function secretHostRefusal(bindings: SecretHosts, variable: string, host: string): string | undefined {
  const bound = Object.hasOwn(bindings, variable) ? bindings[variable] : undefined;
  if (bound === undefined) return undefined;
  const canonical = canonicalHost(host) ?? host;
  const patterns = bound.map(parseHostPattern).filter((p): p is HostPattern => !('problem' in p));
  if (patterns.some((pattern) => hostMatches(pattern, canonical))) return undefined;
  return `${variable} may be sent only to ${bound.join(', ')} (secretHosts), not to ${canonical}`;
}
