import { type TimeZone, timeZone } from '../../src/cron/index.js';
import { viewerZone } from './cron-preview.js';
import type { ZoneChoice } from './zone-text.js';

/**
 * The one zone every view shows times in (issue #23): the user's (their `display.timezone`, set
 * for them or their tenant, else the browser's zone), or UTC — the person's choice, remembered in
 * local storage (no secret).
 */

export type { ZoneChoice };

const KEY = 'ursa.zone';
const UTC = timeZone('UTC');

function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

let choice: ZoneChoice = storage()?.getItem(KEY) === 'utc' ? 'utc' : 'local';
/** The user's display zone when one is set for them or their tenant (`GET …/me`); else null. */
let userZone: TimeZone | null = null;

/**
 * Takes the user's `display.timezone` as the zone of `local` (`from`: where the server found it;
 * `default` means nothing is set, and the browser's zone is kept). An id this browser does not know
 * keeps the browser's zone too.
 */
export function setUserZone(displayTimezone: { readonly value: string; readonly from: string } | null): void {
  try {
    userZone =
      displayTimezone === null || displayTimezone.from === 'default' ? null : timeZone(displayTimezone.value);
  } catch {
    userZone = null;
  }
}

export function zoneChoice(): ZoneChoice {
  return choice;
}

/** Chooses the zone of every view from now on, and remembers it for the next visit. */
export function setZoneChoice(next: ZoneChoice): void {
  choice = next;
  storage()?.setItem(KEY, next);
}

/** The zone of `local`: the user's display zone, else the browser's. */
export function localZone(): TimeZone {
  return userZone ?? viewerZone();
}

/** The zone times are shown in. */
export function shownZone(): TimeZone {
  return choice === 'utc' ? UTC : localZone();
}
