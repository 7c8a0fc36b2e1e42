import { describe, expect, it } from 'vitest';
import { problemsText } from '../../web/src/announce.js';
import { viewTitle } from '../../web/src/view-title.js';

// issue #23 item 6: the words the page gives screen readers, without a browser.

describe('the document title of each view', () => {
  it('names the view, then Ursa', () => {
    const scope = { tenant: 'acme', project: 'ops' };
    expect([
      viewTitle(undefined),
      viewTitle({ view: 'list', ...scope }),
      viewTitle({ view: 'new', ...scope }),
      viewTitle({ view: 'edit', ...scope, name: 'heartbeat' }),
      viewTitle({ view: 'run', ...scope, name: 'heartbeat', id: 'run_1' }),
      viewTitle({ view: 'process', ...scope, name: 'heartbeat', id: 'proc_1' }),
      viewTitle({ view: 'session', ...scope, name: 'heartbeat', id: 'sess_1' }),
      viewTitle({ view: 'inbox', ...scope }),
      viewTitle({ view: 'trash', ...scope }),
      viewTitle({ view: 'recipe', ...scope, name: 'sleepy' }),
    ]).toEqual([
      'Sign in — Ursa',
      'Schedulers of acme/ops — Ursa',
      'New scheduler — Ursa',
      'heartbeat — Ursa',
      'Run run_1 of heartbeat — Ursa',
      'Process proc_1 of heartbeat — Ursa',
      'Session sess_1 of heartbeat — Ursa',
      'Inbox (acme) — Ursa',
      'Trash of acme/ops — Ursa',
      'Recipe sleepy — Ursa',
    ]);
  });
});

describe('the announcement of a document’s problems', () => {
  it('is one short sentence with the count', () => {
    expect([0, 1, 3].map(problemsText)).toEqual([
      'No problems: the document is valid.',
      '1 problem in the document.',
      '3 problems in the document.',
    ]);
  });
});
