import { performance } from 'node:perf_hooks';
import { positive, usageError } from './lib/args.mjs';
import { formatTable } from './lib/table.mjs';

/**
 * Scenario `templates` (issue #19): the worst workflow templates found, each rendered as one
 * step's params through Ursa's own `renderStepParams` under the default limits, and the time
 * each render holds the event loop (it is synchronous, so its wall time is the hold). Also the
 * write-time check of the longest template allowed. The report's `maxMs` is the largest hold of
 * any render; the limits are meant to keep it at about 50 ms or less.
 */

const DEFAULTS = { rounds: 20 };
const TARGET_MS = 50;

/** `{% … %}` and `{{ … }}` written the way Ursa reads them (`${% … %}`, `${{ … }}`). */
const t = (text) => text.replaceAll('{%', '${%').replaceAll('{{', '${{');
const repeat = (text, n) => Array.from({ length: n }, () => text).join('');

/**
 * Each case: one step's params. `topic` is 8 KiB, as a shell step's output tail can be; `items`
 * a list of objects at the list limit.
 */
function cases(limits) {
  const list = limits.listElements;
  const filterOnList = (filter) => ({ text: t(`{{ (1..${list}) | ${filter} | size }}`) });
  const filterOnItems = (filter) => ({ text: t(`{{ params.items | ${filter} | size }}`) });
  const param = (name, text) => ({ [name]: text });
  const deepIfs = Math.floor((limits.parseChars - 1) / t('{% if true %}{% endif %}').length);
  const outputs = Math.floor(limits.parseChars / t('{{ params.topic }}').length);
  return {
    'three nested for loops, output': param(
      'x',
      t(
        `{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}x{% endfor %}{% endfor %}{% endfor %}`,
      ),
    ),
    'three nested for loops, no output': param(
      'x',
      t(
        `{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}{% endfor %}{% endfor %}{% endfor %}`,
      ),
    ),
    '200 params of nested loops (one step)': Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [
        `p${i}`,
        t(`{% for a in (1..1000) %}{% for b in (1..1000) %}{{ a }}{% endfor %}{% endfor %}`),
      ]),
    ),
    'capture doubling': param(
      'x',
      t(
        `{% capture x %}ab{% endcapture %}{% for i in (1..64) %}{% capture x %}{{x}}{{x}}{% endcapture %}{% endfor %}{{ x | size }}`,
      ),
    ),
    'append doubling': param(
      'x',
      t(
        `{% assign x = "ab" %}{% for i in (1..64) %}{% assign x = x | append: x %}{% endfor %}{{ x | size }}`,
      ),
    ),
    'output bomb (a param in a loop)': param(
      'x',
      t(`{% for i in (1..100000) %}{{ params.topic }}{% endfor %}`),
    ),
    'largest range': param('x', t(`{{ (1..${limits.memoryUnits - 1}) | size }}`)),
    'loop over the largest range': param('x', t(`{% for i in (1..${limits.memoryUnits - 1}) %}{% endfor %}`)),
    'sort at the list limit': filterOnList('sort'),
    'sort_natural at the list limit': param(
      'x',
      t(`{{ (1..${list}) | join: "," | split: "," | sort_natural | size }}`),
    ),
    'uniq at the list limit': filterOnList('uniq'),
    'where at the list limit': filterOnItems('where: "x"'),
    'reject at the list limit': filterOnItems('reject: "x"'),
    'group_by at the list limit': filterOnItems('group_by: "x"'),
    'map at the list limit': filterOnItems('map: "x"'),
    'find at the list limit': filterOnItems('find: "x", 1'),
    'has at the list limit': filterOnItems('has: "x", 1'),
    'sum at the list limit': filterOnList('sum'),
    'json at the list limit': filterOnList('json'),
    'sample at the list limit': filterOnList(`sample: ${list}`),
    'array_to_sentence_string at the list limit': filterOnList('array_to_sentence_string'),
    'string filters on the memory limit': param(
      'x',
      t(
        `{% assign s = params.topic %}{% for i in (1..6) %}{% assign s = s | append: s %}{% endfor %}{{ s | strip_html | escape | slugify | upcase | size }}`,
      ),
    ),
    'date with a huge width': param('x', t('{{ "now" | date: "%999999999d" | size }}')),
    [`${deepIfs} nested ifs (longest template)`]: param(
      'x',
      t(`${repeat('{% if true %}', deepIfs)}x${repeat('{% endif %}', deepIfs)}`),
    ),
    'longest template of outputs': param('x', t(repeat('{{ params.topic }}', outputs))),
  };
}

function parseArgs(args) {
  const options = { ...DEFAULTS };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    if (flag === '--rounds') options.rounds = positive(flag, value);
    else throw usageError(`unknown option ${arg} (--rounds=N)`);
  }
  return options;
}

/** Wall time of `fn` in ms and how it ended (`ok` or Ursa's message, cut short). */
function time(fn) {
  const started = performance.now();
  let outcome = 'ok';
  try {
    fn();
  } catch (error) {
    outcome = error.code === undefined ? `crash: ${error.message}` : error.message;
  }
  return { ms: performance.now() - started, outcome };
}

export async function run(args, { onProgress }) {
  const options = parseArgs(args);
  const { DEFAULT_TEMPLATE_LIMITS: limits } = await import('../dist/config/template-limits.js');
  const { checkTemplate, renderStepParams } = await import('../dist/workflows/template.js');
  // A list of objects at the list limit, as a start's params may give (about 140 KB of JSON).
  const items = Array.from({ length: limits.listElements }, (_, i) => ({ x: i % 100, y: `item ${i}` }));
  const scope = { params: { topic: 'x'.repeat(8192), items }, steps: {} };
  const rows = [];
  for (const [name, params] of Object.entries(cases(limits))) {
    onProgress(name);
    const check = Object.values(params).map((text) => checkTemplate(text, limits));
    const refused = check.find((c) => 'problem' in c);
    const holds = [];
    let outcome = refused === undefined ? '' : `refused when written: ${refused.problem}`;
    for (let i = 0; refused === undefined && i < options.rounds + 2; i++) {
      const result = time(() => renderStepParams(params, scope, limits));
      if (i >= 2) holds.push(result.ms); // the first two warm the JIT up
      outcome = result.outcome;
    }
    holds.sort((a, b) => a - b);
    const checkMs = Math.max(
      ...Array.from(
        { length: 3 },
        () => time(() => Object.values(params).map((p) => checkTemplate(p, limits))).ms,
      ),
    );
    rows.push({
      name,
      medianMs: holds[Math.floor(holds.length / 2)] ?? 0,
      maxMs: holds.at(-1) ?? 0,
      checkMs,
      outcome,
    });
  }
  const maxMs = Math.max(...rows.map((r) => Math.max(r.maxMs, r.checkMs)));
  return { options, limits, targetMs: TARGET_MS, maxMs, rows };
}

export function format(report) {
  const { limits } = report;
  const table = formatTable(
    ['template (one step)', 'outcome', 'median ms', 'max ms', 'check ms'],
    report.rows.map((r) => [
      r.name,
      r.outcome.slice(0, 48),
      r.medianMs.toFixed(1),
      r.maxMs.toFixed(1),
      r.checkMs.toFixed(1),
    ]),
    { textColumns: 2 },
  );
  return [
    `templates: event-loop hold of one step's render (${report.options.rounds} renders each, after 2 to warm up)`,
    `limits: parse ${limits.parseChars} chars, render ${limits.renderMs} ms, memory ${limits.memoryUnits}, ` +
      `lists ${limits.listElements}, param ${limits.paramBytes} B, run ${limits.runBytes} B`,
    table,
    `max hold: ${report.maxMs.toFixed(1)} ms (${report.maxMs <= report.targetMs ? 'within' : 'OVER'} the ${report.targetMs} ms target)`,
  ].join('\n');
}
