import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import { parseRecipeDocument } from '../../src/recipes/parse.js';
import { thrown } from '../support/cron.js';

const PATH = '_vance/recipes/research.yaml';
/** As a recipe is written on a server with a public URL (issue #25). */
const writing = {
  name: 'research',
  path: PATH,
  source: 'project',
  publicUrl: 'https://ursa.example.com',
} as const;

function issues(text: string, options: Parameters<typeof parseRecipeDocument>[1] = writing): unknown {
  return (thrown(() => parseRecipeDocument(text, options)) as UrsaError).issues;
}

// Issue #25: the `agent` engine's recipe — url, heartbeatTimeout, headers and secret headers as http.
describe('agent recipes (issue #25)', () => {
  it('reads an agent recipe with url, heartbeatTimeout and secret headers', () => {
    const recipe = parseRecipeDocument(
      `description: Hands research to the agent service.
engine: agent
url: https://agents.example.com/runs
heartbeatTimeout: PT5M
secretHeaders:
  Authorization: URSA_SECRET_AGENTS
`,
      writing,
    );
    expect(recipe).toMatchObject({
      engine: 'agent',
      url: 'https://agents.example.com/runs',
      heartbeatTimeoutMs: 300_000,
      secretHeaders: { Authorization: 'URSA_SECRET_AGENTS' },
    });
  });

  it('refuses an agent recipe without a valid url or heartbeatTimeout, with their field paths', () => {
    expect(issues('description: d\nengine: agent\n')).toEqual([
      {
        path: 'url',
        message:
          'is required when engine is agent: the absolute http:// or https:// URL to POST to, e.g. https://hooks.example.com/briefing',
      },
      {
        path: 'heartbeatTimeout',
        message:
          'is required when engine is agent: how long the agent service may stay silent before the run fails, an ISO-8601 duration such as PT5M',
      },
    ]);
    const bad = issues(
      'description: d\nengine: agent\nurl: ftp://agents.example.com/\nheartbeatTimeout: soon\n',
    ) as {
      path: string;
    }[];
    expect(bad.map((i) => i.path)).toEqual(['url', 'heartbeatTimeout']);
  });

  it('refuses heartbeatTimeout for the other built-in engines', () => {
    expect(issues('description: d\nengine: noop\nheartbeatTimeout: PT1M\n')).toEqual([
      { path: 'heartbeatTimeout', message: 'is only for the agent engine; engine "noop" takes none' },
    ]);
  });

  it('refuses an agent recipe written where the server has no publicUrl, saying so at engine', () => {
    const text =
      'description: d\nengine: agent\nurl: https://agents.example.com/runs\nheartbeatTimeout: PT5M\n';
    expect(issues(text, { ...writing, publicUrl: null })).toEqual([
      {
        path: 'engine',
        message:
          'agent needs the server to have a public URL for the callbacks of agent services (operator setting publicUrl, URSA_PUBLIC_URL), and none is configured',
      },
    ]);
    // Read for a run (no publicUrl given), a stored recipe loads: the run itself says what is missing.
    const { publicUrl: _, ...reading } = writing;
    expect(parseRecipeDocument(text, reading).engine).toBe('agent');
  });
});
