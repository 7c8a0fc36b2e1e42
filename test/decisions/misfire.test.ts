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
