import { readFileSync } from 'node:fs';

/**
 * Milliseconds since the host booted, time it spent suspended included (Linux's boot-time clock,
 * read from `/proc/uptime`, 10 ms resolution), or undefined where there is none. The monotonic
 * clock that the fence keeps its deadlines on stops while the host is suspended (a laptop's lid
 * closed, a VM paused by its hypervisor on some platforms); this one does not, so a renewal after
 * a suspend can tell how long the lease really went unrenewed (decisions §5 fencing).
 */
export function bootTimeMs(): number | undefined {
  try {
    const seconds = Number.parseFloat(readFileSync('/proc/uptime', 'utf8'));
    return Number.isFinite(seconds) ? Math.round(seconds * 1000) : undefined;
  } catch {
    return undefined;
  }
}
