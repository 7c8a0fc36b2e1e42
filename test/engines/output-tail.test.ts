import { describe, expect, it } from 'vitest';
import { OutputTail } from '../../src/engines/output-tail.js';

describe('OutputTail: a fixed ring of the last bytes', () => {
  it('keeps everything until the limit, then the last `limit` bytes across wrap-arounds', () => {
    const tail = new OutputTail(8);
    tail.push(Buffer.from('abc'));
    expect(tail.text()).toBe('abc');
    expect(tail.truncated).toBe(false);
    tail.push(Buffer.from('defgh'));
    expect(tail.text()).toBe('abcdefgh');
    expect(tail.truncated).toBe(false);
    tail.push(Buffer.from('ijklmno'));
    expect(tail.text()).toBe('hijklmno');
    expect(tail.truncated).toBe(true);
    tail.push(Buffer.from('p'));
    expect(tail.text()).toBe('ijklmnop');
  });

  it('keeps the end of a chunk longer than the limit', () => {
    const tail = new OutputTail(8);
    tail.push(Buffer.from('abc'));
    tail.push(Buffer.from('pqrstuvwxyz'));
    expect(tail.bytes()).toEqual(Buffer.from('stuvwxyz'));
  });

  it('keeps nothing with limit 0', () => {
    const tail = new OutputTail(0);
    tail.push(Buffer.from('abc'));
    expect(tail.text()).toBe('');
    expect(tail.truncated).toBe(true);
  });

  it('drops continuation bytes only when the front was cut', () => {
    const cut = new OutputTail(5);
    cut.push(Buffer.from('xxééé'));
    expect(cut.text()).toBe('éé');
    const whole = new OutputTail(5);
    whole.push(Buffer.from([0x80, 0x41]));
    expect(whole.text()).toBe('\uFFFDA');
  });

  it('keeps a 4-byte character cut after its first byte out entirely', () => {
    const tail = new OutputTail(4);
    tail.push(Buffer.from('a😀b'));
    expect(tail.text()).toBe('b');
  });
});
