import { describe, expect, it } from 'vitest';
import { parseCron, timeZone } from '../../src/cron/index.js';
import { decideDue, type MisfireSettings } from '../../src/decisions/misfire.js';

const t = (text: string) => Date.parse(text);
const MINUTE = 60_000;

function settings(misfire: 'once' | 'skip', catchUpWindowMs?: number): MisfireSettings {
  return {
    trigger: { kind: 'cron', expression: '0 */5 * * * *', cron: parseCron('0 */5 * * * *') },
    zone: timeZone('UTC'),
    misfire,
    catchUpWindowMs,
  };
}

// decisions §4: misfire policies and the catch-up window.
describe('decideDue (decisions §4)', () => {
  it('runs a late occurrence once under misfire: once', () => {
    const d = decideDue(settings('once'), t('2026-01-01T00:00:00Z'), t('2026-01-01T03:02:00Z'), MINUTE);
    expect(d.action).toBe('fire');
    expect(d.advance.coalesced).toBe(true);
  });

  it('skips an occurrence older than the misfire threshold under misfire: skip', () => {
    const d = decideDue(settings('skip'), t('2026-01-01T00:00:00Z'), t('2026-01-01T00:01:00.001Z'), MINUTE);
    expect(d).toMatchObject({ action: 'skip', reason: 'misfire-threshold' });
    expect(d.advance.nextRunAt).toBe(t('2026-01-01T00:05:00Z'));
  });

  it('runs an occurrence within the misfire threshold under misfire: skip', () => {
    expect(
      decideDue(settings('skip'), t('2026-01-01T00:00:00Z'), t('2026-01-01T00:01:00Z'), MINUTE).action,
    ).toBe('fire');
  });

  // Issue #20: under misfire: skip the newest missed occurrence decides, as for catchUpWindow.
  it('under misfire: skip runs the newest missed occurrence within the threshold and skips the older ones', () => {
    // Every 5 minutes, down from 00:00 to 03:00:30: 00:00 … 02:55 are older than a minute, 03:00 is not.
    const d = decideDue(settings('skip'), t('2026-01-01T00:00:00Z'), t('2026-01-01T03:00:30Z'), MINUTE);
    expect(d).toMatchObject({
      action: 'skip-older',
      reason: 'misfire-threshold',
      skipped: { from: t('2026-01-01T00:00:00Z'), until: t('2026-01-01T02:55:00Z') },
    });
    expect(d.advance).toMatchObject({
      scheduledFor: t('2026-01-01T00:00:00Z'),
      newestDue: t('2026-01-01T03:00:00Z'),
      nextRunAt: t('2026-01-01T03:05:00Z'),
      coalesced: true,
    });
  });

  it('under misfire: skip skips a single older occurrence and runs the newest one', () => {
    const d = decideDue(settings('skip'), t('2026-01-01T00:00:00Z'), t('2026-01-01T00:05:10Z'), MINUTE);
    expect(d).toMatchObject({
      action: 'skip-older',
      skipped: { from: t('2026-01-01T00:00:00Z'), until: t('2026-01-01T00:00:00Z') },
    });
    expect(d.advance.newestDue).toBe(t('2026-01-01T00:05:00Z'));
  });

  it('under misfire: skip skips a whole backlog whose newest missed occurrence is older than the threshold', () => {
    const d = decideDue(settings('skip'), t('2026-01-01T00:00:00Z'), t('2026-01-01T03:01:00.001Z'), MINUTE);
    expect(d).toMatchObject({ action: 'skip', reason: 'misfire-threshold' });
    expect(d.advance).toMatchObject({ newestDue: t('2026-01-01T03:00:00Z'), coalesced: true });
  });

  it('under misfire: skip runs a backlog whose oldest occurrence is within the threshold once', () => {
    // Every 10 seconds, 30 seconds late: all three are within a minute.
    const every10s: MisfireSettings = {
      ...settings('skip'),
      trigger: { kind: 'cron', expression: '*/10 * * * * *', cron: parseCron('*/10 * * * * *') },
    };
    const d = decideDue(every10s, t('2026-01-01T00:00:00Z'), t('2026-01-01T00:00:25Z'), MINUTE);
    expect(d.action).toBe('fire');
    expect(d.advance).toMatchObject({ coalesced: true, newestDue: t('2026-01-01T00:00:20Z') });
  });

  it('skips a backlog whose newest missed occurrence is older than the catch-up window', () => {
    // Newest due 03:00, now 03:04: 4 minutes old, window 3 minutes.
    const d = decideDue(
      settings('once', 3 * MINUTE),
      t('2026-01-01T00:00:00Z'),
      t('2026-01-01T03:04:00Z'),
      MINUTE,
    );
    expect(d).toMatchObject({ action: 'skip', reason: 'catch-up-window' });
    expect(d.advance.newestDue).toBe(t('2026-01-01T03:00:00Z'));
  });

  it('runs a backlog whose newest missed occurrence is inside the catch-up window', () => {
    expect(
      decideDue(settings('once', 5 * MINUTE), t('2026-01-01T00:00:00Z'), t('2026-01-01T03:04:00Z'), MINUTE)
        .action,
    ).toBe('fire');
  });

  it('always runs a one-shot, however late (spec §10a)', () => {
    const at: MisfireSettings = {
      trigger: { kind: 'at', at: '2026-01-01T00:00:00Z', instant: t('2026-01-01T00:00:00Z') },
      zone: timeZone('UTC'),
      misfire: 'skip',
      catchUpWindowMs: MINUTE,
    };
    expect(decideDue(at, t('2026-01-01T00:00:00Z'), t('2026-02-01T00:00:00Z'), MINUTE).action).toBe('fire');
  });
});
