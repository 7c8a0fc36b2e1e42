import { isIP } from 'node:net';
import { type AddressRange, canonicalAddress, parseAddressRange } from './address-range.js';
import { canonicalHost, type HostPattern, hostMatches, parseHostPattern } from './host-pattern.js';

/**
 * Where the `http` engine may connect (issue #19): the operator's allow and deny lists, the
 * ranges denied by default, and Ursa's own HTTP listener. A pure decision over one connection
 * attempt; `outbound-connect.ts` applies it to the address a connection actually goes to.
 */

/** One entry of `outboundAllow` / `outboundDeny`: a host pattern or an address range. */
export type OutboundEntry =
  | { readonly kind: 'host'; readonly pattern: HostPattern }
  | { readonly kind: 'range'; readonly range: AddressRange };

/** What an outbound entry may be, for messages. */
export const OUTBOUND_ENTRY_ALLOWED =
  'a host name (api.example.com), *. and a domain (*.example.org), an IP address or a CIDR range (10.0.0.0/8, fd00::/8)';

/** `text` as an {@link OutboundEntry}, or why it is none (a phrase after the quoted value). */
export function parseOutboundEntry(text: string): OutboundEntry | { readonly problem: string } {
  const range = parseAddressRange(text);
  if (range !== undefined) return { kind: 'range', range };
  const slash = text.indexOf('/');
  if (slash !== -1 && isIP(text.slice(0, slash)) !== 0) {
    return { problem: 'is not a CIDR range: the prefix length after / is 0-32 for IPv4, 0-128 for IPv6' };
  }
  const pattern = parseHostPattern(text);
  return 'problem' in pattern ? pattern : { kind: 'host', pattern };
}

/** An address `ursa serve` listens on: a host as configured (`127.0.0.1`, `0.0.0.0`, `::`, a name) and a port. */
export interface Listener {
  readonly host: string;
  readonly port: number;
}

/** The operator's outbound rules (see {@link outboundRefusal}). */
export interface OutboundRules {
  readonly allow: readonly OutboundEntry[];
  readonly deny: readonly OutboundEntry[];
  /** Ursa's own HTTP listeners, never reached through the engine. */
  readonly listeners: readonly Listener[];
}

/**
 * Ranges refused unless an `outboundAllow` address range holds the address: link-local (cloud
 * metadata at 169.254.169.254), the other cloud metadata addresses, and "this host" addresses,
 * which reach the machine itself.
 */
export const DEFAULT_DENIED: readonly { readonly range: AddressRange; readonly why: string }[] = [
  ['169.254.0.0/16', 'link-local, cloud metadata'],
  ['fe80::/10', 'link-local'],
  ['fd00:ec2::254/128', 'cloud metadata'],
  ['100.100.100.200/32', 'cloud metadata'],
  ['0.0.0.0/8', 'this host'],
  ['::/128', 'this host'],
].map(([text, why]) => ({ range: parseAddressRange(text as string) as AddressRange, why: why as string }));

const LOOPBACK = [parseAddressRange('127.0.0.0/8'), parseAddressRange('::1')] as AddressRange[];
/** Addresses a connection to which the kernel delivers to this machine itself (`0.0.0.0`, `::`). */
const THIS_HOST = [parseAddressRange('0.0.0.0/8'), parseAddressRange('::/128')] as AddressRange[];
const UNSPECIFIED = new Set(['', '0.0.0.0', '::', '*']);

/** One connection attempt: the URL's host, the address it is about to connect to, the port. */
export interface OutboundTarget {
  /** The host of the URL (a name or an IP address). */
  readonly host: string;
  /** The IP address connected to. */
  readonly address: string;
  readonly port: number;
}

function entryMatches(entry: OutboundEntry, host: string, address: string): boolean {
  return entry.kind === 'host' ? hostMatches(entry.pattern, host) : entry.range.contains(address);
}

function entryText(entry: OutboundEntry): string {
  return entry.kind === 'host' ? entry.pattern.text : entry.range.text;
}

/** Whether `listener` receives a connection to `address:port`; `local` are the machine's own addresses. */
function reachesListener(
  listener: Listener,
  address: string,
  port: number,
  local: readonly string[],
): boolean {
  if (listener.port !== port) return false;
  // A connection to "this host" reaches whatever listens on the port here, on any address.
  if (THIS_HOST.some((range) => range.contains(address))) return true;
  const own = canonicalAddress(listener.host.replace(/^\[(.*)\]$/u, '$1'));
  // A wildcard or a host name: any address of this machine may reach it.
  if (own === undefined || UNSPECIFIED.has(own) || UNSPECIFIED.has(listener.host)) {
    return LOOPBACK.some((range) => range.contains(address)) || local.includes(address);
  }
  return own === address;
}

/**
 * Why a connection to `target` is refused, or `undefined` when it may go ahead. In this order:
 * 1. Ursa's own listener (`host:port` of a {@link Listener}) is always refused;
 * 2. an `outboundDeny` entry that names the host or holds the address refuses it;
 * 3. with a non-empty `outboundAllow`, a connection no entry names (host) or holds (address) is refused;
 * 4. an address in {@link DEFAULT_DENIED} is refused unless an `outboundAllow` address range holds
 *    it (a host name in `outboundAllow` does not: the name may resolve anywhere).
 * `localAddresses` are the addresses of this machine's interfaces (canonical forms). The reason
 * names the host, the address and the rule. Pure.
 */
export function outboundRefusal(
  rules: OutboundRules,
  target: OutboundTarget,
  localAddresses: readonly string[] = [],
): string | undefined {
  const host = canonicalHost(target.host) ?? target.host;
  const address = canonicalAddress(target.address) ?? target.address;
  const local = localAddresses.map((a) => canonicalAddress(a) ?? a);
  // An IP address in the URL is the address connected to: shown once, in its canonical form.
  const where = host === address || canonicalAddress(host) !== undefined ? address : `${host} (${address})`;
  const refused = (rule: string) => `outbound policy refuses ${where} port ${target.port}: ${rule}`;
  const listener = rules.listeners.find((l) => reachesListener(l, address, target.port, local));
  if (listener !== undefined) {
    const shown = listener.host.includes(':') ? `[${listener.host}]` : listener.host;
    return refused(`it is Ursa's own HTTP listener ${shown}:${listener.port}`);
  }
  const denied = rules.deny.find((entry) => entryMatches(entry, host, address));
  if (denied !== undefined) return refused(`outboundDeny has ${entryText(denied)}`);
  if (rules.allow.length > 0 && !rules.allow.some((entry) => entryMatches(entry, host, address))) {
    return refused('no outboundAllow entry names the host or holds the address');
  }
  const builtIn = DEFAULT_DENIED.find((d) => d.range.contains(address));
  const overridden = rules.allow.some((entry) => entry.kind === 'range' && entry.range.contains(address));
  if (builtIn !== undefined && !overridden) {
    return refused(
      `${builtIn.range.text} (${builtIn.why}) is denied by default; an outboundAllow range may allow it`,
    );
  }
  return undefined;
}
