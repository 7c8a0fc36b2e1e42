import { localZone, type ZoneChoice } from './zone.js';
import { zoneToggleText } from './zone-text.js';

/**
 * The header's zone switch (issue #23): one button that says which zone every time on the page is
 * in and which one a press shows (`Times in Europe/Paris · show UTC`); pressed (`aria-pressed`)
 * while the times are in UTC. The choice outlives the tab.
 */
export function ZoneToggle({
  choice,
  onChange,
}: {
  choice: ZoneChoice;
  onChange: (next: ZoneChoice) => void;
}) {
  const text = zoneToggleText(choice, localZone().id);
  return (
    <button
      type="button"
      class="link zone-toggle"
      aria-pressed={choice === 'utc'}
      onClick={() => onChange(choice === 'utc' ? 'local' : 'utc')}
    >
      {/* One flex item (buttons are inline-flex): the space before the dot stays. */}
      <span>
        <span id="zone-now">{text.shown}</span>
        {text.other !== null && ` · ${text.other}`}
      </span>
    </button>
  );
}
