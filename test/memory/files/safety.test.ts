import { spawn } from 'node:child_process';
import { promises as fs, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { acquireLock } from '../../../memory/files/lock.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { prose, writeSampleCorpus } from '../helpers/corpus.ts';

const CHILD = fileURLToPath(new URL('../helpers/ingest-child.ts', import.meta.url));

function manyFiles(root: string, n: number, paragraphs = 20): string {
  const dir = path.join(root, 'many');
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++)
    writeFileSync(
      path.join(dir, `file-${String(i).padStart(3, '0')}.txt`),
      `unique${i}marker\n\n${prose(i + 1, paragraphs)}`,
    );
  return dir;
}

interface Child {
  lines: string[];
  exit: Promise<number | null>;
  kill(): void;
  waitFor(pred: (lines: string[]) => boolean): Promise<void>;
}

/** Starts an ingest of `paths` into `store`; `pause` makes it wait for a kill at a point (see ingest-child.ts). */
function startChild(
  store: string,
  segmentChars: number,
  paths: string[],
  pause: { PAUSE_AT_COMMIT?: string; PAUSE_IN_WRITE?: string } = {},
): Child {
  const proc = spawn(process.execPath, ['--no-node-snapshot', CHILD, store, String(segmentChars), ...paths], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...pause },
  });
  onTestFinished(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let stderr = '';
  proc.stderr.on('data', (d) => {
    stderr += String(d);
  });
  proc.stdout.on('data', (d: Buffer) => {
    lines.push(...String(d).split('\n').filter(Boolean));
    for (const w of waiters.splice(0)) w();
  });
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    lines,
    exit: exit.then((code) => {
      if (code !== 0 && code !== null) throw new Error(`child failed (${code}): ${stderr}`);
      return code;
    }),
    kill: () => proc.kill('SIGKILL'),
    waitFor: async (pred) => {
      while (!pred(lines)) {
        if (proc.exitCode !== null) throw new Error(`child exited early: ${stderr}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
  };
}

describe('crash safety', () => {
  it('a store whose writer is killed mid-ingest opens, searches, and a re-run completes it without duplicates', async () => {
    const root = tempDir();
    const corpus = manyFiles(root, 40);
    // Reference: the same corpus ingested without interruption.
    const refDir = path.join(root, 'ref');
    const ref = await ChunkStore.open(refDir, { create: true });
    const expected = await ref.ingestPaths([corpus]);
    await ref.close();

    const dir = path.join(root, 'store');
    for (const killAtCommit of [1, 4]) {
      // The child stops at that commit line, before writing its segment, and waits there for the kill.
      const child = startChild(dir, 20_000, [corpus], { PAUSE_AT_COMMIT: String(killAtCommit) });
      await child.waitFor((l) => l.filter((x) => x.startsWith('commit')).length >= killAtCommit);
      child.kill();
      await child.exit;
      const store = await ChunkStore.open(dir, { lockWaitMs: 1000 });
      const { documents } = store.stats();
      expect(documents).toBeLessThan(40);
      // What was committed before the kill is there: nothing at the first commit line, some at the fourth.
      expect(documents > 0).toBe(killAtCommit > 1);
      await store.search('river stone');
      await store.close();
    }
    const store = await ChunkStore.open(dir, { lockWaitMs: 1000 });
    const finish = await store.ingestPaths([corpus]);
    expect(finish.skipped).toBeGreaterThan(0);
    expect(finish.added + finish.skipped).toBe(40);
    expect(finish.documents).toBe(expected.documents);
    expect(finish.chunks).toBe(expected.chunks);
    expect(finish.tokens).toBe(expected.tokens);
    expect(await store.search('unique7marker')).toHaveLength(1);
    await store.close();
  });

  it('a writer killed while a segment file is being written leaves an openable store; the next writer cleans up', async () => {
    const root = tempDir();
    const corpus = manyFiles(root, 40, 200);
    const dir = path.join(root, 'store');
    const segDir = path.join(dir, 'segments');
    // One segment for the whole corpus: its chunk file (MBs, streamed in pieces, written last) is cut
    // off by the kill, which comes while the child waits after the file's first write.
    const child = startChild(dir, 100_000_000, [corpus], { PAUSE_IN_WRITE: '.chunks.tmp-' });
    await child.waitFor((l) => l.some((x) => x.startsWith('writing ')));
    const cutOff = path.basename(child.lines.find((x) => x.startsWith('writing '))!.slice('writing '.length));
    expect(readdirSync(segDir)).toContain(cutOff);
    child.kill();
    await child.exit;
    const store = await ChunkStore.open(dir, { lockWaitMs: 1000 });
    // All or nothing: the segment's documents are committed together or not at all.
    expect([0, 40]).toContain(store.stats().documents);
    await store.search('river stone');
    const finish = await store.ingestPaths([corpus]);
    expect(finish.added + finish.skipped).toBe(40);
    expect(finish.documents).toBe(40);
    expect(await store.search('unique7marker')).toHaveLength(1);
    await store.close();
    expect(readdirSync(segDir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('two writers at once: the second waits for the first, nothing interleaves', async () => {
    const root = tempDir();
    const a = manyFiles(path.join(root, 'a'), 12);
    const b = path.join(root, 'b');
    mkdirSync(b);
    for (let i = 0; i < 12; i++)
      writeFileSync(path.join(b, `other-${i}.txt`), `other${i}token\n\n${prose(100 + i, 20)}`);
    const dir = path.join(root, 'store');
    const one = startChild(dir, 20_000, [a]);
    const two = startChild(dir, 20_000, [b]);
    await Promise.all([one.exit, two.exit]);
    const store = await ChunkStore.open(dir);
    expect(store.stats().documents).toBe(24);
    expect(await store.search('other3token')).toHaveLength(1);
    expect(await store.search('unique3marker')).toHaveLength(1);
    await store.close();
  });

  it('a second writer fails with STORE_LOCKED naming the owner when its wait runs out', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    // The lock is never released here, so the outcome does not depend on how long the wait lasted.
    const store = await ChunkStore.open(dir, { create: true, lockWaitMs: 50 });
    const lock = await acquireLock(dir, { command: 'test holder' });
    const err = await store.ingestPaths([writeSampleCorpus(root)]).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_LOCKED')).toBe(true);
    expect((err as Error).message).toContain(`process ${process.pid}`);
    expect((err as Error).message).toContain('test holder');
    await lock.release();
    expect((await store.ingestPaths([writeSampleCorpus(root)])).added).toBe(4);
    await store.close();
  });

  it('a second writer that may wait says once whom it waits for, and goes on when the lock is released', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const waits: { pid: number; command?: string }[] = [];
    let release = async (): Promise<void> => {};
    // The release comes from the wait notice itself: an event, not a timer, so any machine speed works.
    const store = await ChunkStore.open(dir, {
      create: true,
      lockWaitMs: 600_000,
      onLockWait: (owner) => {
        waits.push({ pid: owner.pid, ...(owner.command ? { command: owner.command } : {}) });
        void release();
      },
    });
    const lock = await acquireLock(dir, { command: 'test holder' });
    release = () => lock.release();
    expect((await store.ingestPaths([writeSampleCorpus(root)])).added).toBe(4);
    expect(waits).toEqual([{ pid: process.pid, command: 'test holder' }]);
    await store.close();
  });

  it('recovers a stale lock left by a dead process', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true, lockWaitMs: 0 });
    const dead = spawn(process.execPath, ['-e', '0']);
    const pid = dead.pid!;
    await new Promise((r) => dead.on('exit', r));
    writeFileSync(
      path.join(dir, 'write.lock'),
      JSON.stringify({ pid, host: (await import('node:os')).hostname(), startedAt: 'x' }),
    );
    expect((await store.ingestPaths([writeSampleCorpus(root)])).added).toBe(4);
    await expect(fs.access(path.join(dir, 'write.lock'))).rejects.toThrow();
    await store.close();
  });
});

describe('corruption and repair', () => {
  async function builtStore() {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestPaths([writeSampleCorpus(root)]);
    await store.close();
    return { root, dir };
  }

  it('a corrupted derived file gives STORE_CORRUPT naming it, and repair rebuilds it', async () => {
    const { dir } = await builtStore();
    const index = path.join(dir, 'segments', 'seg-000001.bm25');
    const bytes = await fs.readFile(index);
    // One byte of the header region (after the 16-byte preamble) changed: its CRC no longer matches.
    bytes.writeUInt8(bytes.readUInt8(40) ^ 0x20, 40);
    writeFileSync(index, bytes);
    const store = await ChunkStore.open(dir);
    const err = await store.search('flimflam').catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain(index);
    expect((err as Error).message).toContain('rlm repair');
    await store.close();
    const report = await repairStore(dir);
    expect(report.documents).toBe(4);
    expect(report.actions.join('\n')).toContain('seg-000001.bm25 does not check out');
    const fixed = await ChunkStore.open(dir);
    expect((await fixed.search('flimflam'))[0]?.preview).toContain('flimflam');
    await fixed.close();
  });

  it('a damaged links file gives STORE_CORRUPT naming it; repair computes its links again', async () => {
    const { dir } = await builtStore();
    const store = await ChunkStore.open(dir);
    const id = store.documents().find((d) => d.chunks > 1)!.id;
    const before = await store.neighbors(`${id}:0`);
    await store.close();
    const file = path.join(dir, 'segments', 'seg-000001.links');
    const bytes = await fs.readFile(file);
    // A byte of its header region (after the 16-byte preamble): every read of the file checks it.
    bytes.writeUInt8(bytes.readUInt8(20) ^ 0x11, 20);
    writeFileSync(file, bytes);
    const damaged = await ChunkStore.open(dir);
    const err = await (async () => {
      try {
        for (const d of damaged.documents())
          for (let i = 0; i < d.chunks; i++) await damaged.neighbors(`${d.id}:${i}`);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain(file);
    await damaged.close();
    const report = await repairStore(dir);
    expect(report.actions.join('\n')).toContain(
      'seg-000001.links does not check out: its links are computed again',
    );
    const fixed = await ChunkStore.open(dir);
    // Computed again by the same rules from the same chunks: the same links.
    expect(await fixed.neighbors(`${id}:0`)).toEqual(before);
    await fixed.close();
  });

  it('a hand-edited manifest gives STORE_CORRUPT; repair restores it with the documents', async () => {
    const { dir } = await builtStore();
    writeFileSync(
      path.join(dir, 'rlm-store.json'),
      '{ "format": "rlm-chunk-graph", "schema": 1, "segments": "oops" }',
    );
    const err = await ChunkStore.open(dir).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain('rlm-store.json');
    await repairStore(dir);
    const store = await ChunkStore.open(dir);
    expect(store.stats().documents).toBe(4);
    expect(await store.search('quarkbeam')).toHaveLength(1);
    await store.close();
  });

  it('a lost documents file is rebuilt from chunks, and the next ingest refreshes the records', async () => {
    const { root, dir } = await builtStore();
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'rlm-store.json'), 'utf8')) as {
      documents: string;
    };
    writeFileSync(path.join(dir, manifest.documents), 'not json');
    expect(isRlmError(await ChunkStore.open(dir).catch((e: unknown) => e), 'STORE_CORRUPT')).toBe(true);
    const report = await repairStore(dir);
    expect(report.actions.join('\n')).toContain('rebuilt 4 document records');
    const store = await ChunkStore.open(dir);
    expect(await store.search('quarkbeam')).toHaveLength(1);
    const again = await store.ingestPaths([path.join(root, 'corpus')]);
    expect(again).toMatchObject({ updated: 4, documents: 4 });
    await store.close();
  });

  it('an unreadable chunk file loses only its documents, listed with their files, and only when confirmed', async () => {
    const { dir } = await builtStore();
    writeFileSync(path.join(dir, 'segments', 'seg-000001.chunks'), '\u0000\u0001garbage');
    const refused = await repairStore(dir);
    expect(refused.applied).toBe(false);
    expect(refused.dropped).toHaveLength(4);
    expect(refused.dropped.every((d) => d.path !== null && path.isAbsolute(d.path))).toBe(true);
    // Nothing was written: the damaged file is still there, as it was.
    expect(await fs.readFile(path.join(dir, 'segments', 'seg-000001.chunks'), 'utf8')).toBe(
      '\u0000\u0001garbage',
    );

    const asked: number[] = [];
    const report = await repairStore(dir, {
      confirm: (d) => {
        asked.push(d.length);
        return true;
      },
    });
    expect(asked).toEqual([4]);
    expect(report.applied).toBe(true);
    const store = await ChunkStore.open(dir);
    expect(store.stats().documents).toBe(0);
    await store.close();
  });

  it('a chunk file damaged in one chunk keeps every document whose chunks are readable', async () => {
    const { dir } = await builtStore();
    const file = path.join(dir, 'segments', 'seg-000001.chunks');
    const raw = await fs.readFile(file);
    const reader = await ChunkStore.open(dir);
    const before = (await Promise.all(reader.documents().map((d) => reader.documentChunks(d.id)))).flat();
    const victim = before.find((c) => c.text.includes('quarkbeam'))!;
    // One byte of the victim's text changed: that chunk alone fails its CRC.
    const at = raw.indexOf('quarkbeam');
    raw.writeUInt8(raw.readUInt8(at) ^ 0x01, at);
    writeFileSync(file, raw);
    const err = await reader.search('quarkbeam').catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain(file);
    await reader.close();
    let listed: { id: string; path: string | null }[] = [];
    const report = await repairStore(dir, {
      confirm: (d) => {
        listed = d;
        return true;
      },
    });
    expect(listed.map((d) => d.id)).toEqual([victim.document]);
    const docs = new Set(before.map((c) => c.document));
    expect(report.documents).toBe(docs.size - 1);
    const store = await ChunkStore.open(dir);
    expect(await store.search('quarkbeam')).toEqual([]);
    expect((await store.search('flimflam')).length).toBeGreaterThan(0);
    for (const d of store.documents()) expect(await store.documentChunks(d.id)).toHaveLength(d.chunks);
    await store.close();
  });
});

describe('repair compaction', () => {
  it('drops the chunks of replaced documents from shared segments and keeps everything else working', async () => {
    const root = tempDir();
    const corpus = writeSampleCorpus(root);
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestPaths([corpus]);
    writeFileSync(path.join(corpus, 'guide.md'), '# Setup\n\nNow install the brandnewtool instead.\n');
    await store.ingestPaths([corpus]);
    const before = store.stats();
    await store.close();

    // A long-lived reader with warm caches (an MCP server) must see the compacted store correctly.
    const reader = await ChunkStore.open(dir);
    const [story] = await reader.search('river stone garden');
    expect((await reader.getChunk(story!.id))?.text).toBeDefined();

    const report = await repairStore(dir);
    expect(report.actions.join('\n')).toMatch(/compacted: removed \d+ chunks? /);
    await reader.refresh();
    const again = (await reader.getChunk(story!.id))!;
    const fresh = await ChunkStore.open(dir);
    expect(again.text).toBe((await fresh.getChunk(story!.id))!.text);
    await fresh.close();
    expect((await reader.documentChunks(story!.document)).map((c) => c.id)).toContain(story!.id);
    expect((await reader.search('river stone garden'))[0]?.id).toBe(story!.id);
    await reader.close();
    // The compacted segment is written under a new name: readers cache segments by name as immutable.
    const files = (await fs.readdir(path.join(dir, 'segments'))).filter((f) => f.endsWith('.chunks'));
    expect(files).not.toContain('seg-000001.chunks');
    for (const f of files) {
      const text = await fs.readFile(path.join(dir, 'segments', f), 'utf8');
      expect(text.includes('zephyrine'), f).toBe(false);
    }
    const fixed = await ChunkStore.open(dir);
    expect(fixed.stats()).toMatchObject({
      documents: before.documents,
      chunks: before.chunks,
      tokens: before.tokens,
    });
    expect(await fixed.search('zephyrine')).toEqual([]);
    const [flim] = await fixed.search('flimflam');
    expect((await fixed.getChunk(flim!.id))?.text).toContain('flimflam');
    for (const d of fixed.documents()) expect(await fixed.documentChunks(d.id)).toHaveLength(d.chunks);
    expect(await fixed.ingestPaths([corpus])).toMatchObject({ added: 0, updated: 0, skipped: 4 });
    await fixed.close();
  });
});
