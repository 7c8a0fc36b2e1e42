/*
 * A `_tenant` one-shot fires once in each project that is active when it falls due, and never
 * later as a catch-up in a project that becomes active afterwards (decisions §5). Whether a
 * project takes one up is decided when it registers it: a project active when the one-shot falls
 * due has registered it by then (at its activation, or when the one-shot was written), so a
 * registration after that instant is a project that became active too late. Instants are UTC
 * epoch ms.
 */

/**
 * When a tenant one-shot falls due: its `at:` instant, or, for one Ursa first knew only after
 * that instant (written already past), the instant it first knew it.
 */
export function tenantOneShotDueAt(at: number, knownAt: number): number {
  return Math.max(at, knownAt);
}

/**
 * The instant a registration pass at `asOf` records as the first knowledge of a tenant one-shot
 * whose document version was written at `writtenAt`: never before that write, so that a pass
 * that began just before the write and a pass that follows it agree on when it falls due.
 */
export function firstKnownAt(asOf: number, writtenAt: number): number {
  return Math.max(asOf, writtenAt);
}

/**
 * Whether a project that registers the tenant one-shot in a pass at `asOf` (it holds no state
 * for it yet) takes it: only when the pass is not later than the instant it falls due.
 */
export function takesTenantOneShot(at: number, knownAt: number, asOf: number): boolean {
  return asOf <= tenantOneShotDueAt(at, knownAt);
}
