import { shownZone, type ZoneChoice } from './zone.js';

/**
 * The header's zone switch: which zone every time on the page is in, and a toggle button for UTC
 * (pressed: UTC). The choice outlives the tab.
 */
export function ZoneToggle({
  choice,
  onChange,
}: {
  choice: ZoneChoice;
  onChange: (next: ZoneChoice) => void;
}) {
  return (
    <span class="zone-toggle">
      <span id="zone-now">Times in {shownZone().id}</span>
      <button
        type="button"
        class="link"
        aria-pressed={choice === 'utc'}
        aria-describedby="zone-now"
        onClick={() => onChange(choice === 'utc' ? 'local' : 'utc')}
      >
        UTC
      </button>
    </span>
  );
}
