import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/errors/index.js';
import { SETTING_KEYS } from '../../src/service/settings.js';
import { TOOLS } from '../../src/tools/toolset.js';
import { FIELDS } from '../../web/src/schema-info.js';

// User-facing text names no specification section or issue number (issue #21): a user cannot
// open "spec §10b". Comments and docs/ keep those citations; these strings speak for themselves.
const CITATION = /§|\bspec\b|decisions §|issue #/i;

describe('user-facing text', () => {
  it('the error catalogue documents every code without citing a spec section or issue', () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) expect(entry.doc, code).not.toMatch(CITATION);
  });

  it('the agent tools (MCP) describe themselves and their fields without citations', () => {
    expect(TOOLS.length).toBeGreaterThan(0);
    for (const tool of TOOLS) {
      // The description, and the input and output schemas with their field descriptions.
      const { handler: _handler, ...shown } = tool;
      expect(JSON.stringify(shown), tool.name).not.toMatch(CITATION);
    }
  });

  it('the settings and the web editor’s field hints cite nothing', () => {
    for (const [key, setting] of Object.entries(SETTING_KEYS)) {
      expect(`${setting.doc} ${setting.allowed}`, key).not.toMatch(CITATION);
    }
    for (const field of FIELDS) expect(field.about, field.name).not.toMatch(CITATION);
  });
});
