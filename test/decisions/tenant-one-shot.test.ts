import { describe, expect, it } from 'vitest';
import { firstKnownAt, takesTenantOneShot, tenantOneShotDueAt } from '../../src/decisions/tenant-one-shot.js';

const t = (text: string) => Date.parse(text);

// Decisions §5 (issue #20): a _tenant one-shot runs in the projects that take it up by the
// instant it falls due, and in no project that comes later.
describe('tenant one-shots (decisions §5)', () => {
  const at = t('2026-06-01T08:30:00Z');

  it('falls due at its instant when Ursa knew it before, else when Ursa first knew it', () => {
    expect(tenantOneShotDueAt(at, t('2026-06-01T08:00:00Z'))).toBe(at);
    expect(tenantOneShotDueAt(at, t('2026-06-01T09:00:00Z'))).toBe(t('2026-06-01T09:00:00Z'));
  });

  it('is taken up by a registration up to its instant, and by none after it', () => {
    const known = t('2026-06-01T08:00:00Z');
    expect(takesTenantOneShot(at, known, t('2026-06-01T08:10:00Z'))).toBe(true);
    expect(takesTenantOneShot(at, known, at)).toBe(true);
    expect(takesTenantOneShot(at, known, at + 1)).toBe(false);
  });

  it('written already past, is taken up by the pass of its write and by no later one', () => {
    const written = t('2026-06-01T09:00:00Z');
    const known = firstKnownAt(written, written);
    expect(takesTenantOneShot(at, known, written)).toBe(true);
    expect(takesTenantOneShot(at, known, written + 1)).toBe(false);
  });

  it('is never known before the write of the version a pass read, so a pass that began just before the write agrees', () => {
    const written = t('2026-06-01T09:00:00Z');
    expect(firstKnownAt(written - 5, written)).toBe(written);
    expect(firstKnownAt(written + 5, written)).toBe(written + 5);
    // The write's own pass (as of the write) still takes it up after the early pass recorded it.
    expect(takesTenantOneShot(at, firstKnownAt(written - 5, written), written)).toBe(true);
  });
});
