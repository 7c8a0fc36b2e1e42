/** Backoff of a delivery to an agent service it did not take (a stop, an answer): 1 s, doubling, at most a minute. */
const DELIVERY_RETRY_BASE_MS = 1000;
const DELIVERY_RETRY_MAX_MS = 60_000;

/**
 * When the next send of a delivery to an agent service may go after `tries` failed sends (1, 2,
 * …), from `now` (UTC ms): 1 s, 2 s, 4 s … at most 60 s later (issue #25). Pure.
 */
export function nextDeliveryAt(now: number, tries: number): number {
  return now + Math.min(DELIVERY_RETRY_BASE_MS * 2 ** (tries - 1), DELIVERY_RETRY_MAX_MS);
}
