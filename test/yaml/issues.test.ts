import { describe, expect, it } from 'vitest';
import { appendField, fieldPath, topField } from '../../src/yaml/field-path.js';
import { describeValue, sortIssues } from '../../src/yaml/issues.js';
import { documentRefused, issueLines } from '../../src/yaml/report.js';

describe('field paths in issues', () => {
  it('joins plain keys with dots, indexes in brackets, other keys quoted', () => {
    expect(fieldPath(['params', 'model'])).toBe('params.model');
    expect(fieldPath(['tags', 2])).toBe('tags[2]');
    expect(fieldPath(['params', 'a.b', 0])).toBe('params["a.b"][0]');
    expect(appendField('', 'my key')).toBe('["my key"]');
  });

  it('finds the top-level field of a path', () => {
    expect(topField('params[0][0].x')).toBe('params');
    expect(topField('cron')).toBe('cron');
    expect(topField('["a.b"].c')).toBe('["a.b"]');
    expect(topField('')).toBe('');
  });
});

describe('describing what was found', () => {
  it.each([
    [undefined, 'nothing'],
    [null, 'null'],
    ['yes', 'the string "yes"'],
    [3, 'the number 3'],
    [false, 'the boolean false'],
    [['a'], 'a list'],
    [{ a: 1 }, 'a mapping'],
    ['x'.repeat(61), `the string "${'x'.repeat(60)}…"`],
  ])('%j reads as %s', (value, text) => {
    expect(describeValue(value)).toBe(text);
  });
});

describe('reporting issues', () => {
  const issues = [
    { path: 'enabled', message: 'expected a boolean' },
    { path: '', message: 'exactly one of cron and at must be set; found both' },
  ];

  it('writes one line per issue, each naming the document', () => {
    expect(issueLines('_vance/scheduler/x.yaml', issues)).toBe(
      '_vance/scheduler/x.yaml: enabled: expected a boolean\n_vance/scheduler/x.yaml: exactly one of cron and at must be set; found both',
    );
  });

  it('orders whole-document issues first, then by field order, unknown fields last', () => {
    const fields = ['description', 'cron', 'enabled'];
    const unknown = { path: 'colour', message: 'unknown field' };
    const cron = { path: 'cron', message: 'bad' };
    expect(sortIssues([unknown, ...issues, cron], fields)).toEqual([issues[1], cron, issues[0], unknown]);
  });

  it('builds the error with the first field and the issue list', () => {
    const error = documentRefused('RECIPE_INVALID', '_vance/recipes/x.yaml', issues);
    expect(error.code).toBe('RECIPE_INVALID');
    expect(error.field).toBe('enabled');
    expect(error.issues).toEqual(issues);
    expect(error.status).toBe(400);
  });
});
