import { describe, expect, it } from 'vitest';
import { StartLead } from '../../src/runtime/start-lead.js';

describe('the lead of a batch start (issue #4)', () => {
  it('is 2 ms before any start was measured', () => {
    expect(new StartLead().ms()).toBe(2);
  });

  it('covers the slowest recent start with half again and 2 ms to spare, in whole milliseconds', () => {
    const lead = new StartLead();
    for (const ms of [2, 7.2, 3]) lead.observe(ms);
    expect(lead.ms()).toBe(13);
  });

  it('forgets a slow start once `window` faster ones followed it', () => {
    const lead = new StartLead(3);
    for (const ms of [40, 2, 2, 2]) lead.observe(ms);
    expect(lead.ms()).toBe(5);
  });

  it('never exceeds its ceiling, however slow a start was', () => {
    const lead = new StartLead(16, 1, 100);
    lead.observe(5_000);
    expect(lead.ms()).toBe(100);
  });
});
