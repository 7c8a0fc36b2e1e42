import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextFireTime, parseCron, previousFireTime, timeZone } from '../../src/cron/index.js';
import { isUrsaError } from '../../src/errors/index.js';
import { casesDir, iso, loadCronVectors } from '../support/cases.js';

// decisions §3; every case of the reference vectors (test/cases/, copied from shared/cases/).
const vectors = loadCronVectors();

describe('cron reference vectors (decisions §3)', () => {
  it('reads all 515 cases from the shared file', () => {
    expect(vectors.length).toBe(515);
  });

  it('reads the file unmodified: its digest is the one test/cases/SOURCE.md records', () => {
    const digest = createHash('sha256')
      .update(readFileSync(resolve(casesDir(), 'cron-vectors.json')))
      .digest('hex');
    const source = readFileSync(resolve(import.meta.dirname, '../cases/SOURCE.md'), 'utf8');
    expect(source).toContain(`cron-vectors.json sha256: ${digest}`);
  });

  for (const v of vectors) {
    const title = `${v.id}: ${JSON.stringify(v.expr)} in ${v.zone} from ${v.from}`;
    if (v.error) {
      it(`${title} is refused as CRON_INVALID`, () => {
        let caught: unknown;
        try {
          parseCron(v.expr);
        } catch (error) {
          caught = error;
        }
        expect(isUrsaError(caught, 'CRON_INVALID'), String(caught)).toBe(true);
      });
      continue;
    }
    const expected = v.expected ?? [];
    it(`${title} fires at ${expected.length === 0 ? 'no time' : expected[0]}`, () => {
      const cron = parseCron(v.expr);
      const zone = timeZone(v.zone);
      const actual: string[] = [];
      let t: number | null = Date.parse(v.from);
      for (let k = 0; k < expected.length; k++) {
        t = nextFireTime(cron, zone, t as number);
        if (t === null) break;
        actual.push(iso(t));
      }
      expect(actual).toEqual(expected);
      if (expected.length < 5) {
        const after =
          expected.length === 0 ? Date.parse(v.from) : Date.parse(expected[expected.length - 1] as string);
        expect(nextFireTime(cron, zone, after)).toBeNull();
      }
      // previous agrees with next: previous(expected[k]) = expected[k-1].
      for (let k = 1; k < expected.length; k++) {
        const prev = previousFireTime(cron, zone, Date.parse(expected[k] as string));
        expect(prev === null ? null : iso(prev), `previous(${expected[k]})`).toBe(expected[k - 1]);
      }
    });
  }
});
