/**
 * Which worker claims which schedulers (issue #24): every scheduler belongs to one of
 * {@link SLOT_COUNT} slots by a hash of its key, and the live workers share the slots out evenly.
 * A worker claims the occurrences of its own slots, so one scheduler's consecutive occurrences go
 * to one worker while it lives, and workers do not compete for the same rows. Ownership is an
 * affinity, not a guarantee: the claim itself is still the compare-and-swap of decisions §4, so
 * two workers that briefly disagree on the live set (one has not read a join or a loss yet)
 * claim each occurrence once all the same; and an occurrence overdue longer than a lost
 * worker's lease is claimed by any worker (see {@link stealBefore}). Pure.
 */

/**
 * How many slots the schedulers are spread over. Stored with each scheduler's state (column
 * `schedule_state.slot`, migration 0024): changing it, or {@link slotOf}, needs a migration that
 * recomputes the column.
 */
export const SLOT_COUNT = 64;

/** The key of a scheduler: tenant, project and name. */
export interface SlotKey {
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
}

/**
 * The slot of a scheduler, 0 … {@link SLOT_COUNT} − 1: FNV-1a (32 bits) of its key's UTF-16
 * code units with NUL separators, modulo the slot count. Stable across versions and platforms.
 */
export function slotOf({ tenant, project, name }: SlotKey): number {
  const text = `${tenant}\u0000${project}\u0000${name}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % SLOT_COUNT;
}

/**
 * The slots `workerId` claims when `live` are the live workers (ids; `workerId` counts as live
 * whether listed or not): the live ids sorted, slot `s` belongs to the `s mod n`-th of the `n`
 * of them, so each owns ⌊64 / n⌋ or ⌈64 / n⌉ slots and every slot has exactly one owner among
 * workers that read the same live set. Returns `undefined` when `workerId` is the only live
 * worker: it claims every slot (SQLite's one serving process always does).
 */
export function ownedSlots(workerId: string, live: readonly string[]): number[] | undefined {
  const ids = [...new Set([...live, workerId])].sort();
  if (ids.length === 1) return undefined;
  const index = ids.indexOf(workerId);
  const slots: number[] = [];
  for (let slot = index; slot < SLOT_COUNT; slot += ids.length) slots.push(slot);
  return slots;
}

/**
 * The instant (UTC ms) before which a due occurrence is claimed by any worker, whatever its slot,
 * at `now` (UTC ms): one overdue longer than `deadAfterMs` (how long a lost worker keeps its
 * lease) has an owner that is lost, stalled or overloaded, and waiting more for it helps no one.
 */
export function stealBefore(now: number, deadAfterMs: number): number {
  return now - deadAfterMs;
}

/** How long a worker waits before it looks again at due occurrences it could not claim, ms. */
export const HELD_POLL_MS = 250;

/** What a worker's loop knows when it decides when to claim next (see {@link claimWakeAt}). */
export interface ClaimOutlook {
  /** UTC ms: the earliest next occurrence of the worker's own slots (of every slot when it owns all); null: none. */
  readonly mine: number | null;
  /** UTC ms: the earliest next occurrence of any slot; null: none. */
  readonly any: number | null;
  /**
   * Whether its last pass found nothing it could claim although `mine` was due within `aheadMs`:
   * held by other workers' active runs, or behind its own runs still waiting to start.
   */
  readonly heldByOthers: boolean;
  /** UTC ms: now. */
  readonly now: number;
  /** How far ahead of their instant occurrences are claimed, ms. */
  readonly aheadMs: number;
  /** How long a lost worker keeps its lease, ms (see {@link stealBefore}). */
  readonly deadAfterMs: number;
}

/**
 * The instant (UTC ms) at which a worker's loop next has an occurrence to claim, or null when no
 * scheduler has one: its own slots' earliest, less the claim-ahead window, or the first moment
 * any slot's earliest can be stolen, whichever comes first. Without the slots in it, a worker
 * woke for every other worker's due occurrence and claimed nothing, again and again: four workers
 * spent more of the machine on that than on runs. When its last pass could claim none of its own
 * due ones (see {@link ClaimOutlook.heldByOthers}), it looks again after {@link HELD_POLL_MS}. Pure.
 */
export function claimWakeAt(outlook: ClaimOutlook): number | null {
  const { mine, any, now, aheadMs, deadAfterMs } = outlook;
  const wakes = [...(mine === null ? [] : [mine - aheadMs]), ...(any === null ? [] : [any + deadAfterMs])];
  if (wakes.length === 0) return null;
  const wake = Math.min(...wakes);
  return outlook.heldByOthers && wake <= now ? now + HELD_POLL_MS : wake;
}
