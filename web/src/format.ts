import { humanDuration } from '../../src/time/duration.js';
import { formatZoned } from '../../src/time/instant.js';
import { shownZone } from './zone.js';

/** Small formatting helpers for instants and durations as the page shows them. */

/**
 * An ISO instant in the zone the person chose (issue #23): `2026-06-01 08:00:00Z` in UTC,
 * `2026-06-01 10:00:00 +02:00` in another zone (the header names it); `—` for none.
 */
export function shortInstant(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const zone = shownZone();
  const ms = Date.parse(iso);
  if (zone.id === 'UTC' || Number.isNaN(ms)) return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  return formatZoned(ms, zone).slice(4);
}

/** `350 ms`, `12.4 s`, `3 min 5 s`, `2 h 5 min`, `334 d 18 h`; `—` for none. */
export function durationText(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '−' : '';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(abs < 10_000 ? 2 : 1)} s`;
  return `${sign}${humanDuration(abs, { short: true })}`;
}

/** A rough span for people: `5 s`, `12 min`, `3 h 5 min`, `6 d 4 h`. */
export function roughSpan(ms: number): string {
  return humanDuration(Math.round(Math.abs(ms) / 1000) * 1000, { short: true });
}

/** `in 5 min`, `3 h ago` relative to `now`. */
export function relative(iso: string | null | undefined, now: number): string {
  if (iso === null || iso === undefined) return '';
  const delta = Date.parse(iso) - now;
  return delta >= 0 ? `in ${roughSpan(delta)}` : `${roughSpan(delta)} ago`;
}

/** The CSS class of an outcome: good, bad, neutral or pending. */
export function outcomeClass(outcome: string): string {
  if (outcome === 'completed') return 'ok';
  if (outcome === 'failed' || outcome === 'timeout' || outcome.startsWith('error')) return 'bad';
  if (outcome === 'pending' || outcome === 'running' || outcome === 'started' || outcome === 'queued')
    return 'pending';
  return 'neutral';
}

/** A pause as one line: who paused it, when (short, UTC) and why. */
export function pauseText(pause: { note: string; by: string; at: string }): string {
  return `Paused by ${pause.by} at ${shortInstant(pause.at)}${pause.note === '' ? '' : `: ${pause.note}`}`;
}

/** Why a bounded scheduler fires no more, as one line. */
export function finishedText(bounds: {
  endAt: string | null;
  maxRuns: number | null;
  runsStarted: number | null;
  finished: 'ended' | 'max-runs' | null;
}): string {
  return bounds.finished === 'max-runs'
    ? `Fires no more: it started ${bounds.runsStarted} of its maxRuns ${bounds.maxRuns}`
    : `Fires no more: its endAt ${bounds.endAt === null ? '' : shortInstant(bounds.endAt)} has passed`;
}
