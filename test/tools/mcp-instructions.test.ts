import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/cron/index.js';
import { MCP_INSTRUCTIONS } from '../../src/mcp/instructions.js';
import { LockMode } from '../../src/scheduler/definition.js';
import { TOOLS } from '../../src/tools/toolset.js';

// issue #23: the MCP server's instructions tell an agent where to start, the cron dialect and the
// lock modes, and name only tools there are (recipe_list and recipe_get come with the recipe tools).
describe('the MCP instructions', () => {
  it('name the tools to start with, and no tool that does not exist', () => {
    const known = new Set([...TOOLS.map((t) => t.name), 'recipe_list', 'recipe_get']);
    const named = [...MCP_INSTRUCTIONS.matchAll(/\b[a-z]+_[a-z]+\b/g)].map((m) => m[0]);
    expect(named).toEqual(
      expect.arrayContaining(['scheduler_list', 'recipe_list', 'recipe_get', 'scheduler_set']),
    );
    expect(named.filter((name) => !known.has(name))).toEqual([]);
  });

  it('give a six-field cron example that parses, and every lock mode', () => {
    const example = /"([^"]+)" is 09:30 on weekdays/.exec(MCP_INSTRUCTIONS)?.[1] as string;
    expect(parseCron(example).normalized).toBe('0 30 9 * * MON-FRI');
    for (const mode of Object.values(LockMode)) expect(MCP_INSTRUCTIONS).toContain(`${mode},`);
  });
});
