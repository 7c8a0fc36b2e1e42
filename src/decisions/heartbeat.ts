/**
 * What a heartbeat check knows of an agent run (issue #25): when its service was last heard of (any
 * callback, or the 202 that took the run over) and how long it may stay silent. UTC ms and ms.
 */
export interface HeartbeatState {
  readonly lastHeartbeatAt: number;
  readonly heartbeatTimeoutMs: number;
}

/**
 * A heartbeat check's verdict: `alive` until `deadline` (the first instant at which the run is
 * silent too long, UTC ms), or `timeout`: the run fails with reason `heartbeat-timeout`.
 */
export type HeartbeatVerdict =
  | { readonly kind: 'alive'; readonly deadline: number }
  | { readonly kind: 'timeout'; readonly reason: 'heartbeat-timeout'; readonly silentForMs: number };

/**
 * Whether an agent run's service has been silent longer than its `heartbeatTimeout` at `now`
 * (issue #25; spec §4.1: a process whose engine cannot vouch for it ends, never hangs): silent for
 * exactly the timeout is still alive, one millisecond more is a timeout. Pure: the caller reads
 * the clock and applies the verdict (the worker's reap ends the run, releasing its lane).
 */
export function heartbeatVerdict(state: HeartbeatState, now: number): HeartbeatVerdict {
  const silentForMs = now - state.lastHeartbeatAt;
  if (silentForMs > state.heartbeatTimeoutMs)
    return { kind: 'timeout', reason: 'heartbeat-timeout', silentForMs };
  return { kind: 'alive', deadline: state.lastHeartbeatAt + state.heartbeatTimeoutMs + 1 };
}
