import { describe, expect, it } from 'vitest';
import { ByteWriter, readVarint } from '../../memory/byte-writer.ts';

describe('ByteWriter', () => {
  it('writes varints of every width below 2^53 that readVarint gives back', () => {
    const values = [0, 1, 127, 128, 300, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1];
    const w = new ByteWriter(4);
    for (const v of values) w.varint(v);
    const bytes = w.take();
    const cursor = { pos: 0 };
    expect(values.map(() => readVarint(bytes, cursor, bytes.length))).toEqual(values);
    expect(cursor.pos).toBe(bytes.length);
    // Seven bits a byte, low bits first, the high bit on every byte but the last.
    const one = new ByteWriter();
    one.varint(300);
    expect([...one.take()]).toEqual([0xac, 0x02]);
  });

  it('grows past its first size, keeping what was written', () => {
    const w = new ByteWriter(2);
    const block = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
    w.byte(7);
    w.raw(block);
    w.byte(9);
    expect(w.pos).toBe(1002);
    expect([...w.take()]).toEqual([7, ...block, 9]);
  });

  it('reads no further than the end it is given', () => {
    const cursor = { pos: 0 };
    expect(readVarint(Uint8Array.of(0x80, 0x80, 0x01), cursor, 2)).toBe(0);
    expect(cursor.pos).toBe(2);
  });
});
