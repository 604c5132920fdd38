import { describe, expect, it } from 'vitest';
import { TermSlots } from '../../../memory/engine/term-slots.ts';

/** splitmix32, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
}

describe('TermSlots', () => {
  it('agrees with a Map through a long run of adds and removes, giving freed slots again', () => {
    const slots = new TermSlots();
    const model = new Map<string, number>();
    const random = rng(7);
    let peak = 0;
    for (let op = 0; op < 60_000; op++) {
      // Keys drift through a space larger than what is held at once, as a window's vocabulary does.
      const key = `t${Math.floor(op / 20 + random() * 3000)}`;
      const held = model.get(key);
      if (held !== undefined && random() < 0.6) {
        slots.remove(held);
        model.delete(key);
      } else {
        const slot = slots.add(key);
        if (held !== undefined) expect(slot).toBe(held);
        model.set(key, slot);
      }
      peak = Math.max(peak, model.size);
      if (op % 5000 === 0) {
        for (const [k, slot] of model) expect(slots.get(k)).toBe(slot);
      }
    }
    expect(slots.size).toBe(model.size);
    const given = new Set<number>();
    for (const [k, slot] of model) {
      expect(slots.get(k)).toBe(slot);
      expect(slots.termAt(slot)).toBe(k);
      given.add(slot);
    }
    expect(given.size).toBe(model.size);
    // Slots are numbered densely: never more of them than strings held at once.
    expect(Math.max(...given)).toBeLessThan(peak);
    expect(slots.get('t-never')).toBe(-1);
  });

  it('finds strings that share a hash bucket and any UTF-16 content, and frees a slot once', () => {
    const slots = new TermSlots();
    const words = ['', 'a', 'b', '\ud800', 'é', 'éé', '日本', 'a'.repeat(10_000)];
    const given = words.map((w) => slots.add(w));
    expect(new Set(given).size).toBe(words.length);
    for (const [i, w] of words.entries()) expect(slots.get(w)).toBe(given[i]);
    slots.remove(given[1]!);
    expect(slots.get('a')).toBe(-1);
    expect(slots.get('b')).toBe(given[2]);
    expect(() => slots.remove(given[1]!)).toThrow(
      expect.objectContaining({ code: 'RUNTIME', message: expect.stringMatching(/not held/) }),
    );
  });
});
