import { Liquid, Token } from 'liquidjs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE_LIMITS } from '../../src/workflows/template-limits.js';
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
