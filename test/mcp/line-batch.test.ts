import { describe, expect, it } from 'vitest';
import { LineBatcher } from '../../src/mcp/line-batch.ts';

/** Feeds `chunks` through a batcher and returns what came out, chunk by chunk. */
async function through(chunks: string[], flushAbove = 1_000): Promise<string[]> {
  const b = new LineBatcher(flushAbove);
  const out: string[] = [];
  b.on('data', (c: Buffer) => out.push(c.toString('utf8')));
  const ended = new Promise((resolve) => b.once('end', resolve));
  for (const c of chunks) b.write(Buffer.from(c));
  b.end();
  await ended;
  return out;
}

describe('LineBatcher', () => {
  it('passes on whole lines only, however the input is cut', async () => {
    expect(await through(['{"a":', '1}\n{"b"', ':2}\n{"c":3}\n'])).toEqual([
      '{"a":1}\n',
      '{"b":2}\n{"c":3}\n',
    ]);
  });

  it('keeps a multi-byte character cut between chunks whole', async () => {
    const bytes = Buffer.from('"é"\n');
    const b = new LineBatcher(100);
    const out: Buffer[] = [];
    b.on('data', (c: Buffer) => out.push(c));
    b.write(bytes.subarray(0, 2));
    b.write(bytes.subarray(2));
    b.end();
    await new Promise((resolve) => b.once('end', resolve));
    expect(Buffer.concat(out).toString('utf8')).toBe('"é"\n');
    expect(out).toHaveLength(1);
  });

  it('passes on the rest at the end, and an endless line past its bound', async () => {
    expect(await through(['{"a":1}\n{"b"', ':2}'])).toEqual(['{"a":1}\n', '{"b":2}']);
    expect(await through(['aaaa', 'bbbb', 'cc\n'], 6)).toEqual(['aaaabbbb', 'cc\n']);
  });
});
