// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are Ursa's templates, `${{ … }}` and `${% … %}`
import { Liquid, Token } from 'liquidjs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE_LIMITS } from '../../src/config/template-limits.js';
import {
  ALLOWED_TAGS,
  FileAccessRefused,
  NO_FILES,
  sandboxEngine,
} from '../../src/workflows/template-sandbox.js';

// Issue #19: the layers of the template sandbox, each on its own.
describe('the template sandbox (issue #19)', () => {
  it('has exactly the allowed tags and no *_exp filter; a fresh Liquid has the ones it removed', () => {
    const engine = sandboxEngine(DEFAULT_TEMPLATE_LIMITS);
    expect(Object.keys(engine.tags).sort()).toEqual([...ALLOWED_TAGS].sort());
    expect(Object.keys(engine.filters).filter((name) => name.endsWith('_exp'))).toEqual([]);
    const stock = Object.keys(new Liquid().tags);
    expect(stock.filter((tag) => !ALLOWED_TAGS.includes(tag)).sort()).toEqual(
      ['block', 'cycle', 'decrement', 'include', 'increment', 'layout', 'render', 'tablerow'].sort(),
    );
  });

  it('gives the engine a file system whose every method refuses, so nothing can be read or probed', async () => {
    const engine = sandboxEngine(DEFAULT_TEMPLATE_LIMITS);
    expect(engine.options.fs).toBe(NO_FILES);
    expect(engine.options.root).toEqual([]);
    expect(engine.options.partials).toEqual([]);
    expect(engine.options.layouts).toEqual([]);
    expect(engine.options.relativeReference).toBe(false);
    expect(engine.options.dynamicPartials).toBe(false);
    for (const call of [
      () => NO_FILES.existsSync('package.json'),
      () => NO_FILES.readFileSync('package.json'),
      () => NO_FILES.resolve('.', 'package.json', ''),
      () => NO_FILES.containsSync?.('.', 'package.json'),
      () => NO_FILES.dirname?.('package.json'),
      () => NO_FILES.fallback?.('package.json'),
    ])
      expect(call).toThrow(FileAccessRefused);
    await expect(NO_FILES.exists('package.json')).rejects.toThrow(FileAccessRefused);
    await expect(NO_FILES.readFile('package.json')).rejects.toThrow(FileAccessRefused);
    await expect(NO_FILES.contains?.('.', 'package.json')).rejects.toThrow(FileAccessRefused);
  });

  it('reports token positions exactly as Liquid counts them (its getPosition, made linear)', () => {
    const input = 'ab\ncd\n\nefg\n';
    const liquids = (begin: number) => {
      let [row, col] = [1, 1];
      for (let i = 0; i < begin; i++) [row, col] = input[i] === '\n' ? [row + 1, 1] : [row, col + 1];
      return [row, col];
    };
    for (let begin = 0; begin <= input.length; begin++)
      expect(Token.prototype.getPosition.call({ input, begin } as Token)).toEqual(liquids(begin));
  });
});

// liquidjs is pinned exactly (package.json) because the sandbox replaces two of its members; an
// upgrade that renamed or moved one would drop a limit without a word, so these tests fail then.
describe('the liquidjs members the template sandbox replaces are there and used (issue #19)', () => {
  it("Token.prototype.getPosition is the sandbox's, parsed tokens inherit it and the static analysis calls it", () => {
    expect(typeof Token.prototype.getPosition).toBe('function');
    expect(Token.prototype.getPosition.name).toBe('position');
    const engine = sandboxEngine(DEFAULT_TEMPLATE_LIMITS);
    const parsed = engine.parse(
      '${% assign x = 1 %}${{ a.b }}${{ x }}${% for i in c %}${{ i }}${% endfor %}',
    );
    expect(parsed.map((template) => template.token.getPosition === Token.prototype.getPosition)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    const patched = Token.prototype.getPosition;
    let calls = 0;
    Token.prototype.getPosition = function (this: Token) {
      calls++;
      return patched.call(this);
    };
    try {
      expect(engine.globalVariableSegmentsSync(parsed)).toEqual([['a', 'b'], ['c']]);
    } finally {
      Token.prototype.getPosition = patched;
    }
    // One position per variable and local (a.b, x, i, c; x and i as locals) as liquidjs 10.30.1 asks.
    expect(calls).toBe(5);
  });

  it("the renderer's renderTemplates is the sandbox's, over the library's generator, and a render charges its output through it", () => {
    const limits = { ...DEFAULT_TEMPLATE_LIMITS, memoryUnits: 1000 };
    const engine = sandboxEngine(limits);
    expect(Object.hasOwn(engine.renderer, 'renderTemplates')).toBe(true);
    const inherited: unknown = Object.getPrototypeOf(engine.renderer).renderTemplates;
    expect(typeof inherited).toBe('function');
    expect((inherited as () => unknown).constructor.name).toBe('GeneratorFunction');
    // 2000 characters of output: Liquid alone charges none of it to the memory budget of 1000.
    const text = '${% for i in (1..20) %}${{ s }}${% endfor %}';
    const scope = { s: 'x'.repeat(100) };
    const stock = new Liquid({
      outputDelimiterLeft: '${{',
      tagDelimiterLeft: '${%',
      memoryLimit: limits.memoryUnits,
    });
    expect(stock.parseAndRenderSync(text, scope)).toBe('x'.repeat(2000));
    expect(() => engine.parseAndRenderSync(text, scope)).toThrow('memory alloc limit exceeded');
  });
});
