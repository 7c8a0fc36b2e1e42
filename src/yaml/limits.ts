/**
 * Limits every YAML document Ursa loads is held to (decisions §6: bad input is refused with the
 * reason and nothing changes).
 */

/** Largest document body, in bytes of UTF-8 (64 KiB). One byte more is refused. */
export const MAX_DOCUMENT_BYTES = 65_536;

/** Deepest nesting of mappings and lists, counting the top-level mapping as 1 and aliases expanded. */
export const MAX_DEPTH = 64;

/**
 * Most aliases (`*name`) a document may hold, and the `maxAliasCount` handed to the `yaml`
 * package, whose guard weighs each alias by the aliases inside what it expands (alias bombs).
 */
export const MAX_ALIASES = 100;
