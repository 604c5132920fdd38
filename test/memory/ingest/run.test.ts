import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { type DocumentChunker, inlineChunker } from '../../../memory/ingest/chunk-job.ts';
import { workerChunker } from '../../../memory/ingest/chunk-pool.ts';
import type { PendingDoc } from '../../../memory/ingest/prepare.ts';
import { type IngestTarget, ingestPathsInto } from '../../../memory/ingest/run.ts';
import type { DocumentRecord } from '../../../memory/types.ts';
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
