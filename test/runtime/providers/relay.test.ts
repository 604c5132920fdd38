/**
 * `relay:DIR`: requests appear as Markdown files, replies written beside them answer the model, so a
 * separate agent that sees only the request files can drive a run; the run's trace replays with `replay:`.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createModel } from '../../../src/runtime/providers/index.ts';
import { RelayModel } from '../../../src/runtime/providers/relay.ts';
import { RLM } from '../../../src/runtime/rlm.ts';
import { tempDir } from '../../helpers/temp.ts';

const root = tempDir('rlm-relay-');

/**
 * A stand-in for the agent playing the model: it sees only DIR, answers each new request file from what
 * the request says, and writes its reply. Stops when `stop()` is called.
 */
function agent(dir: string, answer: (request: string) => string): { stop(): void; seen: string[] } {
  const seen: string[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      for (const f of existsSync(dir) ? readdirSync(dir).sort() : []) {
        const m = /^(\d+)\.request\.md$/.exec(f);
        if (!m || seen.includes(f)) continue;
        seen.push(f);
        writeFileSync(join(dir, `${m[1]}.reply.md`), answer(readFileSync(join(dir, f), 'utf8')));
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  void loop();
  return { stop: () => (running = false), seen };
}

describe('relay model', () => {
  it('writes each request as Markdown and answers with the reply file; the trace replays', async () => {
    const dir = join(root, 'run');
    const bob = agent(dir, (req) =>
      req.includes('[block 1]')
        ? 'The count is printed above.\nFINAL(words)'
        : 'Counting.\n```repl\nconst words = context.split(/\\s+/).length;\nprint(words)\n```',
    );
    const trace = join(root, 'relay.jsonl');
    try {
      const model = createModel(`relay:${dir}`);
      expect(model).toBeInstanceOf(RelayModel);
      const live = await new RLM({ model, env: {}, trace }).answer({
        question: 'How many words?',
        context: 'a b c d',
      });
      expect(live).toMatchObject({ answer: '4', status: 'final', iterations: 2 });
    } finally {
      bob.stop();
    }
    expect(bob.seen).toEqual(['001.request.md', '002.request.md']);
    const first = readFileSync(join(dir, '001.request.md'), 'utf8');
    expect(first).toMatch(/^# Request 001 \(depth 0, span root\)/);
    expect(first).toContain('to `001.reply.md` in this folder');
    expect(first).toContain('## System prompt');
    expect(first).toContain('## Message 1: user\n\nHow many words?');
    const second = readFileSync(join(dir, '002.request.md'), 'utf8');
    expect(second).toContain('## Message 2: assistant');
    expect(second).toContain('[block 1]\n4');

    const replayed = await new RLM({ model: `replay:${trace}`, env: {} }).answer({
      question: 'How many words?',
      context: 'a b c d',
    });
    expect(replayed).toMatchObject({ answer: '4', status: 'final', iterations: 2 });
  });

  it('continues numbering after earlier requests and stops waiting on abort', async () => {
    const dir = join(root, 'again');
    const model = new RelayModel(dir, { pollMs: 10 });
    const ctl = new AbortController();
    const pending = model.complete({
      system: 's',
      messages: [{ role: 'user', content: 'q' }],
      depth: 0,
      signal: ctl.signal,
    });
    // The request is out (written before complete() returns): the model now waits for its reply.
    expect(existsSync(join(dir, '001.request.md'))).toBe(true);
    ctl.abort();
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
    const next = new RelayModel(dir, { pollMs: 10 });
    writeFileSync(join(dir, '002.reply.md'), 'hello\n');
    const r = await next.complete({ system: 's', messages: [{ role: 'user', content: 'q' }], depth: 1 });
    expect(r.text).toBe('hello');
    expect(existsSync(join(dir, '002.request.md'))).toBe(true);
  });
});
