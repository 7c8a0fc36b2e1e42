import { describe, expect, it } from 'vitest';
import { heartbeatVerdict } from '../../src/decisions/heartbeat.js';

// Issue #25: a run whose agent service stays silent longer than heartbeatTimeout fails.
describe('heartbeatVerdict (issue #25)', () => {
  const state = { lastHeartbeatAt: 1_000_000, heartbeatTimeoutMs: 30_000 };

  it('keeps a run alive while its service was heard within heartbeatTimeout, to the millisecond', () => {
    expect(heartbeatVerdict(state, 1_000_000)).toEqual({ kind: 'alive', deadline: 1_030_001 });
    expect(heartbeatVerdict(state, 1_030_000)).toEqual({ kind: 'alive', deadline: 1_030_001 });
  });

  it('ends it heartbeat-timeout once silent longer than heartbeatTimeout', () => {
    expect(heartbeatVerdict(state, 1_030_001)).toEqual({
      kind: 'timeout',
      reason: 'heartbeat-timeout',
      silentForMs: 30_001,
    });
  });

  it('takes a clock behind the last heartbeat (a clock stepped back) as alive', () => {
    expect(heartbeatVerdict(state, 900_000).kind).toBe('alive');
  });
});
