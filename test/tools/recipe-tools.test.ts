import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { libraryActor } from '../../src/store/audit.js';
import { type AgentIdentity, callTool, TOOLS, toolsFor } from '../../src/tools/toolset.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// Issue #23 item 4: an agent learns which recipes its project can name (recipe_list) and what one
// runs (recipe_get); both read-only, so a read token's agent has them too.

const agent: AgentIdentity = { tenant: 'acme', project: 'ops', user: 'mia' };
const BACKUP =
  'description: Back up\nengine: shell\ncommand: [/usr/local/bin/backup]\nparams: { level: full }\n';

describe.each(DIALECTS)('recipe_list and recipe_get on %s (issue #23)', (dialect) => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const put = (tenant: string, project: string, path: string, body: string) =>
      t.rt.repos.documents.put({ tenant, project, path }, body, libraryActor('ada'), 0);
    await put('acme', 'ops', '_vance/recipes/backup.yaml', BACKUP);
    await put('acme', 'ops', '_vance/recipes/broken.yaml', 'description: b\n');
    await put(
      'acme',
      '_tenant',
      '_vance/recipes/ping.yaml',
      'description: Ping\nengine: http\nurl: https://example.com/\n',
    );
    await put('acme', 'dev', '_vance/recipes/secret.yaml', 'description: Dev only\nengine: noop\n');
    await put('other', 'ops', '_vance/recipes/theirs.yaml', 'description: Theirs\nengine: noop\n');
  });
  afterEach(async () => {
    await t.close();
  });

  it("lists the project's own, _tenant's and the built-in recipes, and nothing of another project or tenant", async () => {
    expect(await callTool(t.rt, agent, TOOLS, 'recipe_list', {})).toEqual({
      ok: true,
      output: {
        recipes: [
          { name: 'backup', description: 'Back up', engine: 'shell', source: 'project' },
          {
            name: 'noop',
            description: 'Does nothing; for tests and benchmarks.',
            engine: 'noop',
            source: 'builtin',
          },
          { name: 'ping', description: 'Ping', engine: 'http', source: 'tenant' },
        ],
        invalid: [{ path: 'ops/_vance/recipes/broken.yaml', message: expect.stringContaining('engine') }],
      },
    });
  });

  it('returns one recipe with its YAML, a broken one with why, and "not found" for a name it cannot name', async () => {
    expect(await callTool(t.rt, agent, TOOLS, 'recipe_get', { name: 'backup' })).toEqual({
      ok: true,
      output: {
        name: 'backup',
        description: 'Back up',
        engine: 'shell',
        source: 'project',
        yaml: BACKUP,
        invalid: null,
      },
    });
    const broken = await callTool(t.rt, agent, TOOLS, 'recipe_get', { name: 'broken' });
    expect(broken).toMatchObject({ ok: true, output: { engine: null, yaml: 'description: b\n' } });
    for (const name of ['secret', 'theirs', 'nope']) {
      expect(await callTool(t.rt, agent, TOOLS, 'recipe_get', { name })).toEqual({
        ok: false,
        error: {
          code: 'NOT_FOUND',
          message: `there is no recipe ${JSON.stringify(name)} for project ops; recipe_list shows the ones there are`,
        },
      });
    }
    expect(await callTool(t.rt, agent, TOOLS, 'recipe_get', { name: '../x' })).toMatchObject({
      ok: false,
      error: { code: 'NAME_INVALID' },
    });
  });

  it('are read-only tools every agent has, a read token included', () => {
    for (const name of ['recipe_list', 'recipe_get']) {
      expect(TOOLS.find((tool) => tool.name === name)?.label).toBe('read-only');
      expect(toolsFor(false, true).map((tool) => tool.name)).toContain(name);
    }
  });
});
