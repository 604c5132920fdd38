import { describe, expect, it } from 'vitest';
import { RlmError } from '../../core/errors.ts';
import { HostBridge, modelMessage } from '../../src/sandbox/bridge.ts';
import { sliceDocuments } from '../../src/sandbox/context-reads.ts';

describe('modelMessage', () => {
  it('keeps one line, drops paths and names the operation', () => {
    const err = new Error('cannot open /home/me/.rlm/store/manifest.json: EACCES\n    at open (node:fs:1:1)');
    expect(modelMessage('peek', err)).toBe('peek: cannot open <path>: EACCES');
    expect(modelMessage('grep', new Error('C:\\Users\\me\\data\\x.txt missing'))).toBe(
      'grep: <path> missing',
    );
  });

  it('adds the code of an RlmError, except for plain input errors', () => {
    expect(modelMessage('grep', new RlmError('TIMEOUT', 'took too long'))).toBe(
      'grep: TIMEOUT: took too long',
    );
    expect(modelMessage('grep', new RlmError('BAD_INPUT', 'bad pattern'))).toBe('grep: bad pattern');
  });

  it('bounds the length', () => {
    expect(modelMessage('llm_query', new Error('x'.repeat(1000))).length).toBeLessThan(320);
  });
});

describe('sliceDocuments', () => {
  it('slices across documents with a newline between them', () => {
    const docs = ['abc', 'def'];
    expect(sliceDocuments(docs, 0, 7)).toBe('abc\ndef');
    expect(sliceDocuments(docs, 2, 5)).toBe('c\nd');
    expect(sliceDocuments(docs, -2, 7)).toBe('ef');
  });
});

describe('HostBridge.handle', () => {
  it('never rejects and only answers during a block', async () => {
    const bridge = new HostBridge({ host: {}, documents: [], contextMode: 'none', maxHostCalls: 5 });
    expect(JSON.parse(await bridge.handle('["peek",{}]'))).toMatchObject({
      ok: false,
      error: 'peek: host calls only work while a block runs',
    });
    bridge.begin();
    expect(JSON.parse(await bridge.handle('not json'))).toMatchObject({ ok: false });
    expect(JSON.parse(await bridge.handle(42))).toMatchObject({
      ok: false,
      error: 'host call: malformed request',
    });
    expect(JSON.parse(await bridge.handle('["nope",{}]'))).toMatchObject({
      ok: false,
      error: 'nope: unknown operation',
    });
    bridge.expire('wall-clock limit reached');
    expect(JSON.parse(await bridge.handle('["peek",{}]'))).toMatchObject({
      ok: false,
      error: 'peek: wall-clock limit reached',
    });
  });
});

describe('a store built on first use', () => {
  it('is asked for only by the calls that need chunks, and then answers them', async () => {
    const { fakeStore } = await import('./fake-store.ts');
    const store = fakeStore();
    let opened = 0;
    const bridge = new HostBridge({
      host: {
        context: ['The launch code is 1234.'],
        store: async () => {
          opened++;
          return store;
        },
      },
      documents: ['The launch code is 1234.'],
      contextMode: 'loaded',
      maxHostCalls: 10,
    });
    bridge.begin();
    const call = async (op: string, payload: unknown) =>
      JSON.parse(await bridge.handle(JSON.stringify([op, payload]))) as { ok: boolean; value: unknown };
    expect((await call('peek', { id: 'doc:0', start: 4, end: 10 })).value).toBe('launch');
    expect(opened).toBe(0);
    const hits = await call('search', { query: 'harbour' });
    expect(hits.ok).toBe(true);
    expect(opened).toBeGreaterThan(0);
    expect((await call('get_chunk', { id: 'a:0' })).value).toMatchObject({ id: 'a:0' });
    expect((await call('peek', { id: 'a:1' })).value).toBe('Second chunk mentions the harbour.');
  });
});

describe('bounds on what one call makes the host do', () => {
  const bridgeOver = (documents: string[]) => {
    const bridge = new HostBridge({ host: {}, documents, contextMode: 'host', maxHostCalls: 10 });
    bridge.begin();
    return async (op: string, payload: unknown) =>
      JSON.parse(await bridge.handle(JSON.stringify([op, payload]))) as {
        ok: boolean;
        value: unknown;
        error?: string;
      };
  };

  it('peek of a context the host serves returns at most 16 Mi characters at once; a bigger slice is refused', async () => {
    const big = 'a'.repeat(16 * 1024 * 1024 + 10);
    const call = bridgeOver([big]);
    expect((await call('peek', { start: 0, end: 1e12 })).error).toBe(
      'peek: peek returns at most 16,777,216 characters at once (this asks for 16,777,226); read it in slices, or grep it',
    );
    expect((await call('peek', { id: 'doc:0' })).ok).toBe(false);
    expect(((await call('peek', { start: 10, end: 16 * 1024 * 1024 + 10 })).value as string).length).toBe(
      16 * 1024 * 1024,
    );
    // A small context asked for far past its end is served whole, as before.
    expect((await bridgeOver(['abc'])('peek', { start: 0, end: 1e12 })).value).toBe('abc');
  });

  it('takes a batch of at most 10,000 sub-calls', async () => {
    const call = bridgeOver(['abc']);
    const r = await call('llm_batched', { items: new Array(10_001).fill({ prompt: 'x' }) });
    expect(r.error).toBe('llm_query_batched: at most 10000 items in one batch');
  });
});
