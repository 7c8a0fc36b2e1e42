import { BlockList, isIP, isIPv4 } from 'node:net';

/** A range of IP addresses an operator names (issue #19): `10.0.0.0/8`, `fd00::/8` or one address. */
export interface AddressRange {
  /** As the operator wrote it, for messages. */
  readonly text: string;
  /** Whether the range holds `address`, an address as {@link canonicalAddress} writes it. */
  contains(address: string): boolean;
}

const MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/u;

/**
 * An IP address in one form per address: IPv6 compressed in lower case, and an IPv4-mapped IPv6
 * address (`::ffff:169.254.169.254`, `::ffff:a9fe:a9fe`) as the IPv4 address it reaches, so a rule
 * for one form holds for the other. `undefined` when `text` is not an IP address.
 */
export function canonicalAddress(text: string): string | undefined {
  const family = isIP(text);
  if (family === 4) return new URL(`http://${text}/`).hostname;
  if (family !== 6) return undefined;
  const v6 = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = MAPPED.exec(v6);
  if (mapped === null) return v6;
  const word = (hex: string | undefined) => Number.parseInt(hex ?? '0', 16);
  const high = word(mapped[1]);
  const low = word(mapped[2]);
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * `text` as an {@link AddressRange}, or `undefined` when it is not an address or a CIDR range. An
 * IPv4-mapped IPv6 range (`::ffff:0:0/96` and narrower) is read as the IPv4 range it maps.
 */
export function parseAddressRange(text: string): AddressRange | undefined {
  const slash = text.indexOf('/');
  const network = canonicalAddress(slash === -1 ? text : text.slice(0, slash));
  if (network === undefined) return undefined;
  const prefixText = slash === -1 ? undefined : text.slice(slash + 1);
  if (prefixText !== undefined && !/^[0-9]{1,3}$/u.test(prefixText)) return undefined;
  const v4 = isIPv4(network);
  let prefix = prefixText === undefined ? (v4 ? 32 : 128) : Number(prefixText);
  // A mapped network came out as IPv4: its prefix counted the 96 bits before the IPv4 part.
  if (v4 && isIP(text.slice(0, slash === -1 ? undefined : slash)) === 6) {
    if (prefix < 96) return undefined;
    prefix -= 96;
  }
  const list = new BlockList();
  try {
    list.addSubnet(network, prefix, v4 ? 'ipv4' : 'ipv6');
  } catch {
    return undefined;
  }
  return {
    text,
    contains: (address) => list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6'),
  };
}
