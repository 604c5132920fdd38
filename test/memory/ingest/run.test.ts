import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { type DocumentChunker, inlineChunker } from '../../../memory/ingest/chunk-job.ts';
import { workerChunker } from '../../../memory/ingest/chunk-pool.ts';
import { PART_BYTES } from '../../../memory/ingest/file-parts.ts';
import type { PendingDoc } from '../../../memory/ingest/prepare.ts';
import { type IngestTarget, ingestPathsInto } from '../../../memory/ingest/run.ts';
import type { DocumentRecord, IngestProgress } from '../../../memory/types.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';
import { prose } from '../helpers/corpus.ts';

function corpus(): string {
  const dir = join(tempDir(), 'corpus');
  mkdirSync(join(dir, 'notes'), { recursive: true });
  for (let i = 0; i < 12; i++) writeFileSync(join(dir, 'notes', `n${i}.txt`), prose(i + 1, 20));
  writeFileSync(join(dir, 'guide.md'), '# Setup\n\nWe decided to use PostgreSQL.\n');
  return dir;
}

/** A store that keeps what it is given and logs every call, to check the calls never overlap. */
function recordingTarget(stored: DocumentRecord[] = []) {
  const log: string[] = [];
  const batches: PendingDoc[][] = [];
  let writing = false;
  const enter = (what: string) => {
    if (writing) throw new Error(`${what} while a batch was being written`);
    log.push(what);
  };
  const target: IngestTarget = {
    document: (id) => {
      enter('document');
      return stored.find((d) => d.id === id);
    },
    documents: () => stored,
    writeBatch: async (docs) => {
      enter('write');
      writing = true;
      // Yield to the event loop mid-write, as a real store's file writes do.
      await new Promise((r) => setImmediate(r));
      batches.push(docs);
      writing = false;
    },
    forget: async () => {},
  };
  return { target, log, batches };
}

const withoutTimes = (batches: PendingDoc[][]) =>
  batches.map((b) => b.map((d) => ({ ...d, record: { ...d.record, ingestedAt: '' } })));

describe('ingestPathsInto', () => {
  it('writes the same batches, in the same order, whether it chunks inline or on a worker', async () => {
    const dir = corpus();
    const inline = recordingTarget();
    const threaded = recordingTarget();
    const opts = { segmentChars: 6000 };
    const a = await ingestPathsInto(inline.target, [dir], opts, () => inlineChunker);
    const b = await ingestPathsInto(threaded.target, [dir], opts, () => workerChunker());
    expect(inline.batches.length).toBeGreaterThan(2);
    expect(withoutTimes(threaded.batches)).toEqual(withoutTimes(inline.batches));
    expect(b).toEqual(a);
    expect(a.added).toBe(13);
    const types = threaded.batches.flat().flatMap((d) => d.types ?? []);
    expect(types).toContain('decision');
  });

  it('writes a batch only after the next one has been read, and never looks up during a write', async () => {
    const dir = corpus();
    const { target, log, batches } = recordingTarget();
    await ingestPathsInto(target, [dir], { segmentChars: 6000 }, () => workerChunker());
    const writes = log.flatMap((e, i) => (e === 'write' ? [i] : []));
    expect(writes.length).toBe(batches.length);
    // Each file costs two lookups (its id, and a stale part after its end). Before the first batch is
    // written, the files of the second have been looked up and handed to the chunker too; the file that
    // fills the second batch starts the write before its stale-part lookup.
    const lookupsBefore = log.slice(0, writes[0]).filter((e) => e === 'document').length;
    expect(lookupsBefore).toBe(2 * (batches[0]!.length + batches[1]!.length) - 1);
    expect(log.at(-1)).toBe('write');
  });

  it('skips what is unchanged without chunking it', async () => {
    const dir = corpus();
    const first = recordingTarget();
    await ingestPathsInto(first.target, [dir], {}, () => inlineChunker);
    const stored = first.batches
      .flat()
      .map((d) => ({ ...d.record, segment: 's', first: 0, chunks: 1, tokens: 1 }));
    const chunked: string[] = [];
    const counting: DocumentChunker = {
      chunk: async (job) => {
        chunked.push(job.path ?? '');
        return inlineChunker.chunk(job);
      },
      close: async () => {},
    };
    const again = recordingTarget(stored);
    const report = await ingestPathsInto(again.target, [dir], {}, () => counting);
    expect(report.skipped).toBe(13);
    expect(chunked).toEqual([]);
    expect(again.batches).toEqual([]);
  });

  it('fails with the chunking error, writes no document from its failure on and closes the chunker', async () => {
    const dir = corpus();
    const { target, batches } = recordingTarget();
    let closed = false;
    const given: string[] = [];
    const failing: DocumentChunker = {
      chunk: async (job) => {
        given.push(job.path ?? '');
        if (given.length === 5) throw new Error('chunking broke');
        return inlineChunker.chunk(job);
      },
      close: async () => {
        closed = true;
      },
    };
    await expect(ingestPathsInto(target, [dir], { segmentChars: 6000 }, () => failing)).rejects.toThrow(
      'chunking broke',
    );
    expect(closed).toBe(true);
    // Only documents chunked before the failure, in whole batches, can have been written.
    const written = batches.flat().map((d) => d.record.path);
    expect(written).toEqual(given.slice(0, written.length));
    expect(written.length).toBeLessThan(5);
  });

  it('stops on abort and closes the worker', async () => {
    const dir = corpus();
    const { target } = recordingTarget();
    const ctrl = new AbortController();
    let closed = false;
    const chunker = workerChunker();
    const watched: DocumentChunker = {
      chunk: (job) => {
        ctrl.abort();
        return chunker.chunk(job);
      },
      close: async () => {
        closed = true;
        await chunker.close();
      },
    };
    await expect(ingestPathsInto(target, [dir], { signal: ctrl.signal }, () => watched)).rejects.toSatisfy(
      (e) => isRlmError(e, 'ABORTED'),
    );
    expect(closed).toBe(true);
  });
});

/** A log of at least `bytes` bytes, in lines, written to a new folder's `big.log`. */
function bigLog(bytes: number): { file: string; text: string; root: string } {
  const root = tempDir();
  const lines: string[] = [];
  for (let size = 0, i = 0; size < bytes; i++) {
    lines.push(`line ${i} of a log too big to be read as one text\n`);
    size += lines.at(-1)!.length;
  }
  const file = join(root, 'big.log');
  const text = lines.join('');
  writeFileSync(file, text);
  return { file, text, root };
}

describe('ingestPathsInto, progress', () => {
  it('moves through a big file part by part, not only from file to file', async () => {
    const { file } = bigLog(400_000);
    const { target } = recordingTarget();
    const seen: IngestProgress[] = [];
    await ingestPathsInto(target, [file], { partBytes: 40_000, onProgress: (p) => seen.push(p) });
    const reading = seen.filter((p) => p.phase === 'read');
    expect(reading.length).toBeGreaterThanOrEqual(10);
    expect(reading.every((p) => p.current === file && p.filesDone === 0)).toBe(true);
    const bytes = reading.map((p) => p.bytesDone);
    for (let i = 1; i < bytes.length; i++) expect(bytes[i]!).toBeGreaterThan(bytes[i - 1]!);
    expect(bytes.at(-1)!).toBeLessThanOrEqual(seen[0]!.bytesTotal);
    expect(seen.at(-1)).toMatchObject({ phase: 'commit', filesDone: 1, bytesDone: seen[0]!.bytesTotal });
  });
});

describe('ingestPathsInto, cancelled', () => {
  it('stops before the next part: a file just over one part leaves the store as it was', async () => {
    // Two parts and one batch: nothing of the file is committed before its end.
    const { file, root } = bigLog(PART_BYTES + 64 * 1024);
    const store = await ChunkStore.open(join(root, 'store'), { create: true });
    try {
      const ctrl = new AbortController();
      // Fired after the check made before the file: its parts are read and chunked after the cancel.
      const onProgress = (p: { phase: string }) => {
        if (p.phase === 'read') ctrl.abort();
      };
      const err = await caught(store.ingestPaths([file], { signal: ctrl.signal, onProgress }));
      expect(err.code).toBe('ABORTED');
      expect(store.documents()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('hands no part to the chunker once cancelled, whatever is left of the file', async () => {
    const { file } = bigLog(400_000);
    const { target, batches } = recordingTarget();
    const ctrl = new AbortController();
    const given: string[] = [];
    const cancelling: DocumentChunker = {
      chunk: async (job) => {
        given.push(job.text);
        ctrl.abort();
        return inlineChunker.chunk(job);
      },
      close: async () => {},
    };
    const opts = { partBytes: 40_000, signal: ctrl.signal };
    expect((await caught(ingestPathsInto(target, [file], opts, () => cancelling))).code).toBe('ABORTED');
    expect(given).toHaveLength(1);
    expect(batches).toEqual([]);
  });

  it('stops the folder scan too', async () => {
    const { target } = recordingTarget();
    const err = await caught(ingestPathsInto(target, [corpus()], { signal: AbortSignal.abort() }));
    expect(err.code).toBe('ABORTED');
    expect(err.message).toContain('scan');
  });

  it('stops before the next commit: the batches committed before the cancel stay, whole', async () => {
    const { file, text, root } = bigLog(400_000);
    const store = await ChunkStore.open(join(root, 'store'), { create: true });
    try {
      const ctrl = new AbortController();
      // Parts of 40,000 bytes, two to a batch; the cancel comes as the first batch is being committed.
      const opts = {
        partBytes: 40_000,
        segmentChars: 60_000,
        signal: ctrl.signal,
        onProgress: (p: { phase: string }) => {
          if (p.phase === 'commit') ctrl.abort();
        },
      };
      expect((await caught(store.ingestPaths([file], opts))).code).toBe('ABORTED');
      const ids = store.documents().map((d) => d.id);
      expect(ids).toHaveLength(2);
      const kept = await store.readDocument(file);
      expect(kept!.text.length).toBeGreaterThan(70_000);
      expect(text.startsWith(kept!.text)).toBe(true);
      expect(kept!.text.endsWith('\n')).toBe(true);
    } finally {
      await store.close();
    }
  });
});
