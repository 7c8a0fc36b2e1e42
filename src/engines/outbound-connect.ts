import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Agent, buildConnector } from 'undici';
import { type OutboundRules, outboundRefusal } from '../net/outbound-policy.js';

/**
 * The connection side of the outbound policy (issue #19): an undici `Agent` whose every new
 * connection first resolves the host, decides on the address it resolved to
 * ({@link outboundRefusal}) and then connects to exactly that address. Resolution and check are
 * one step, so no later answer of the resolver (DNS rebinding) can move the connection elsewhere;
 * a URL with an IP address goes through the same check.
 */

/** Resolves a host name to its addresses, as `dns.lookup(host, { all: true })` does. */
export type HostLookup = (hostname: string) => Promise<readonly { readonly address: string }[]>;

/** The resolver of the operating system (`getaddrinfo`: `/etc/hosts`, then DNS), in its order. */
const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A connection the outbound policy refused; `message` is the reason, which names host, address and rule. */
export class OutboundRefused extends Error {
  override readonly name = 'OutboundRefused';
}

/** The addresses of this machine's network interfaces. */
function localAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/** The port a connection goes to: the URL's, else the scheme's default. */
function portOf(protocol: string, port: string): number {
  if (port !== '') return Number(port);
  return protocol === 'https:' ? 443 : 80;
}

/**
 * An undici `Agent` that connects only where `rules` allow. A refused connection fails with
 * {@link OutboundRefused} before any byte is sent; a name that does not resolve fails with the
 * resolver's error (`ENOTFOUND`). Of several addresses, those the policy allows are tried in the
 * resolver's order until one connects; a denied one is never tried.
 */
export function guardedAgent(rules: OutboundRules, lookup: HostLookup = systemLookup): Agent {
  const connect = buildConnector({});
  return new Agent({
    connect: (options, callback) => {
      const { hostname, protocol } = options;
      const port = portOf(protocol, options.port);
      const resolved = isIP(hostname) === 0 ? lookup(hostname) : Promise.resolve([{ address: hostname }]);
      resolved.then(
        (addresses) => {
          const local = localAddresses();
          const allowed: string[] = [];
          let refusal: string | undefined;
          for (const { address } of addresses) {
            const reason = outboundRefusal(rules, { host: hostname, address, port }, local);
            if (reason === undefined) allowed.push(address);
            else refusal ??= reason;
          }
          if (allowed.length === 0) {
            callback(new OutboundRefused(refusal ?? `${hostname} resolved to no address`), null);
            return;
          }
          // One allowed address after the other (`localhost` may be ::1 first and serve on 127.0.0.1 only).
          // `host` stays the URL's, so TLS still checks the certificate against the name.
          const attempt = (index: number): void =>
            connect({ ...options, hostname: allowed[index] as string }, (...result) => {
              if (result[0] !== null && index + 1 < allowed.length) attempt(index + 1);
              else callback(...result);
            });
          attempt(0);
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
      );
    },
  });
}
