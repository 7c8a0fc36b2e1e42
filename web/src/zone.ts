import { type TimeZone, timeZone } from '../../src/cron/index.js';
import { viewerZone } from './cron-preview.js';

/**
 * The one zone every view shows times in (issue #23): the viewer's (the browser's zone; the
 * server does not tell the page a user's `display.timezone`), or UTC — the person's choice,
 * remembered in local storage (no secret).
 */

/** `local`: the browser's zone; `utc`: UTC. */
export type ZoneChoice = 'local' | 'utc';

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

export function zoneChoice(): ZoneChoice {
  return choice;
}

/** Chooses the zone of every view from now on, and remembers it for the next visit. */
export function setZoneChoice(next: ZoneChoice): void {
  choice = next;
  storage()?.setItem(KEY, next);
}

/** The zone times are shown in. */
export function shownZone(): TimeZone {
  return choice === 'utc' ? UTC : viewerZone();
}
