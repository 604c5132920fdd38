/**
 * The hook's stdin: Claude Code writes one JSON object. Reading stops at the end of stdin, or as soon as
 * the object is whole, or after a few seconds with nothing; then stdin is let go of, so a host that keeps
 * it open never holds the hook process (it kept running until stdin closed, up to Claude Code's timeout).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readHookInput } from '../../src/claude/hook-run.ts';

describe('readHookInput', () => {
  it('takes a whole object at once though stdin stays open, and lets stdin go', async () => {
    const stdin = new PassThrough();
    stdin.write('{"session_id":"s1",');
    stdin.write('"transcript_path":"/p/s1.jsonl"}\n');
    expect(await readHookInput(stdin)).toEqual({ session_id: 's1', transcript_path: '/p/s1.jsonl' });
    expect(stdin.destroyed).toBe(true);
  });

  it('gives up on a stdin that sends nothing, and lets it go', async () => {
    const stdin = new PassThrough();
    await expect(readHookInput(stdin)).rejects.toThrow('no hook input on stdin');
    expect(stdin.destroyed).toBe(true);
  });

  it('still reads input that ends with the stream', async () => {
    const stdin = new PassThrough();
    stdin.end('{"a": [1, 2');
    await expect(readHookInput(stdin)).rejects.toThrow(SyntaxError);
    const whole = new PassThrough();
    whole.end(' {"a": 1} ');
    expect(await readHookInput(whole)).toEqual({ a: 1 });
  });
});
