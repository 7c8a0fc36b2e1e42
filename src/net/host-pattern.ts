import { isIPv6 } from 'node:net';

/**
 * A host an operator names in the configuration (issue #19): one host (`api.example.com`, an IP
 * address such as `10.0.0.5` or `::1`) or every host below a domain (`*.example.org`: any depth,
 * not `example.org` itself). Matched against the host of a URL, never against an address it
 * resolves to.
 */
export interface HostPattern {
  /** As the operator wrote it, for messages. */
  readonly text: string;
  /** The canonical host (`exact`) or the domain with its leading dot (`below`: `.example.org`). */
  readonly host: string;
  readonly kind: 'exact' | 'below';
}

/**
 * The canonical form of a host as WHATWG URL writes it — lower case, IDN as punycode, IPv4 in
 * dotted decimal (`0xa9.254.169.254` → `169.254.169.254`), IPv6 compressed without brackets — and
 * without a trailing dot (`example.com.` is `example.com`). `undefined` when `text` is no host.
 */
export function canonicalHost(text: string): string | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv6(bare)) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  // Anything that would make the text more than a host (port, path, user) is no host.
  if (!/^[^\s/:@?#[\]\\%]+$/u.test(text)) return undefined;
  try {
    const host = new URL(`http://${text}/`).hostname.replace(/\.$/u, '');
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

/** The canonical host of a parsed URL (see {@link canonicalHost}). */
export function urlHost(url: URL): string {
  return canonicalHost(url.hostname) ?? url.hostname;
}

/** `text` as a {@link HostPattern}, or why it is none. The reason follows the quoted value. */
export function parseHostPattern(text: string): HostPattern | { readonly problem: string } {
  const below = text.startsWith('*.');
  const host = canonicalHost(below ? text.slice(2) : text);
  if (host === undefined || host.includes('*')) return { problem: 'is not a host name or IP address' };
  if (below && (isIPv6(host) || /^[0-9.]+$/u.test(host))) {
    return { problem: 'puts *. before an IP address; *. goes before a domain name' };
  }
  return below ? { text, host: `.${host}`, kind: 'below' } : { text, host, kind: 'exact' };
}

/** Whether the canonical `host` (see {@link canonicalHost}) is named by `pattern`. */
export function hostMatches(pattern: HostPattern, host: string): boolean {
  return pattern.kind === 'exact' ? host === pattern.host : host.endsWith(pattern.host);
}
