import { describe, expect, it } from 'vitest';
import { StartLead } from '../../src/runtime/start-lead.js';

describe('the lead of a batch start (issue #4)', () => {
  it('assumes 0.1 ms per run before any start was measured', () => {
    expect(new StartLead().ms(1)).toBe(3);
    expect(new StartLead().ms(1000)).toBe(152);
  });

  it('covers the slowest recent start with half again and 2 ms to spare, in whole milliseconds', () => {
    const lead = new StartLead();
    for (const ms of [2, 7.2, 3]) lead.observe(ms, 100);
    expect(lead.ms(100)).toBe(13);
  });

  it('grows with the batch by the highest recent cost per run', () => {
    const lead = new StartLead();
    lead.observe(10, 200); // 0.05 ms per run
    expect(lead.ms(1000)).toBe(Math.ceil(1000 * 0.05 * 1.5) + 2);
  });

  it('forgets a slow start once `window` faster ones followed it', () => {
    const lead = new StartLead(3);
    for (const ms of [40, 2, 2, 2]) lead.observe(ms, 100);
    expect(lead.ms(100)).toBe(5);
  });

  it('never exceeds its ceiling, however slow a start was', () => {
    const lead = new StartLead(16, 1, 100);
    lead.observe(5_000, 10);
    expect(lead.ms(10)).toBe(100);
  });
});
