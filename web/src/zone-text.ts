/** `local`: the user's zone (their display zone, else the browser's); `utc`: UTC. */
export type ZoneChoice = 'local' | 'utc';

/**
 * What the header's zone toggle says (issue #23): the zone shown, and the one a press shows
 * instead — `Times in Europe/Paris · show UTC`, `Times in UTC · show Europe/Paris`; just `Times
 * in UTC` when the user's zone is UTC too.
 */
export function zoneToggleText(choice: ZoneChoice, local: string): { shown: string; other: string | null } {
  const shown = choice === 'utc' ? 'UTC' : local;
  const other = choice === 'utc' ? local : 'UTC';
  return { shown: `Times in ${shown}`, other: other === shown ? null : `show ${other}` };
}
