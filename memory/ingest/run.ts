/**
 * The steps of an ingest that do not depend on where a store keeps its data, shared by every backend:
 * scanning paths, reading files in parts, skipping unchanged documents, cutting the work into batches of
 * about `segmentChars` of text (each batch one commit), removing parts past a file's new end and, with
 * `prune`, documents whose file is gone. A backend supplies the lookups and the commits.
 */
import { resolve } from 'node:path';
import { RlmError } from '../../core/errors.ts';
import type { DocumentRecord, ImportItem, IngestOptions, IngestReport } from '../types.ts';
import type { DocumentChunker } from './chunk-job.ts';
import { chunkerForIngest } from './chunk-pool.ts';
import { FileList } from './file-list.ts';
import { PART_BYTES, readDocumentParts } from './file-parts.ts';
import { documentIdFor, scanPaths } from './files.ts';
import {
  emptyIngestReport,
  finishDocument,
  type PendingDoc,
  planDocument,
  prepareImported,
  vanished,
} from './prepare.ts';

/**
 * Text per batch before it is written and committed; bounds what a crash can lose and the memory an
 * ingest holds (a batch's text, records and index are alive at once: several times this size).
 * 4 MiB keeps a 100 MB ingest's peak well under its size in transient memory; more, smaller batches
 * cost little, since search statistics are summed over them anyway.
 */
const BATCH_TARGET_CHARS = 4 * 1024 * 1024;

/** What an ingest needs from a store. Lookups see the store as it is now (after the batches committed). */
export interface IngestTarget {
  /** The stored version of a document, or undefined. */
  document(id: string): Promise<DocumentRecord | undefined> | DocumentRecord | undefined;
  /** Every stored document (for `prune` and importers). */
  documents(): Promise<DocumentRecord[]> | DocumentRecord[];
  /** Writes `docs` in one commit, removing the documents `drop` in the same commit. */
  writeBatch(docs: PendingDoc[], report: IngestReport, drop: string[]): Promise<void>;
  /** Removes documents in one commit. */
  forget(docs: DocumentRecord[]): Promise<void>;
  /**
   * Called before a file is read that is stored in parts or will be (`base`: its first part's id): a
   * store whose writers share nothing else (PostgreSQL) keeps other writers of that file out until
   * {@link releaseFiles}. When another writer holds the file, the store calls `drain` (which commits
   * everything in flight and releases every file) before it waits, so an ingest never waits holding one.
   * Absent where one writer holds the whole store.
   */
  holdFile?(base: string, drain: () => Promise<void>): Promise<void>;
  /** Lets other writers have files held by {@link holdFile}, once the batches written so far commit. */
  releaseFiles?(bases: string[]): Promise<void>;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new RlmError('ABORTED', 'ingest was cancelled; committed files are kept, re-run to finish');
}

/** Of the files whose last part a batch holds: their stale parts (removed with it), those held. */
interface BatchEnds {
  stale: DocumentRecord[];
  held: string[];
}

const noEnds = (): BatchEnds => ({ stale: [], held: [] });
const hasEnds = (ends: BatchEnds) => ends.stale.length > 0 || ends.held.length > 0;

/** {@link scanPaths} with the files it found as a {@link FileList}, the list of objects left to die here. */
async function scanForIngest(paths: string[], opts: IngestOptions) {
  const { files, notes, passedOver } = await scanPaths(paths, {
    ...(opts.includeHidden ? { includeHidden: true } : {}),
    ...(opts.noIgnore ? { noIgnore: true } : {}),
    ...(opts.exclude ? { exclude: opts.exclude } : {}),
    ...(opts.followLinks ? { followLinks: true } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return { files: FileList.of(files), notes, passedOver };
}

/**
 * Ingests files and folders into `target`; the report's store totals are left for the caller to fill.
 *
 * Chunking runs one batch ahead of writing: a batch is written only once the next one's documents have
 * all been read and handed to `chunker`, so a worker chunker ({@link chunkerForIngest}) chunks that next
 * batch while this thread indexes and writes. The store is never touched by two steps at once, and a
 * crash loses at most the two batches in flight (committed ones are kept).
 */
export async function ingestPathsInto(
  target: IngestTarget,
  paths: string[],
  opts: IngestOptions,
  pickChunker: (bytesTotal: number) => DocumentChunker = chunkerForIngest,
): Promise<IngestReport> {
  const { files, notes, passedOver } = await scanForIngest(paths, opts);
  const report = emptyIngestReport(notes);
  report.passedOver = passedOver;
  const { bytesTotal } = files;
  let bytesDone = 0;
  /** Of the file being read, as its parts come: a big file is minutes of work, progress moves with it. */
  let fileBytes = 0;
  const progress = (phase: 'read' | 'commit', filesDone: number, current?: string) =>
    opts.onProgress?.({
      phase,
      filesDone,
      filesTotal: files.length,
      bytesDone: bytesDone + fileBytes,
      bytesTotal,
      ...(current !== undefined ? { current } : {}),
    });
  const chunker = pickChunker(bytesTotal);
  /** The batch being read: its documents' chunking, in order. */
  let chunking: Promise<PendingDoc>[] = [];
  let chunkingChars = 0;
  /** The batch read and chunked before it, written once `chunking` is full. */
  let chunked: PendingDoc[] = [];
  // What goes with each batch's commit, of the files whose last part it holds: the parts past a
  // file's new end (it shrank), removed in the same commit, and the files held to let go after it.
  let chunkingEnds = noEnds();
  let chunkedEnds = noEnds();
  /** Writes `chunked`, unless the ingest was cancelled: then what is committed stays, and nothing more. */
  const commit = async (filesDone: number) => {
    throwIfAborted(opts.signal);
    progress('commit', filesDone);
    const { stale, held } = chunkedEnds;
    if (chunked.length > 0)
      await target.writeBatch(
        chunked,
        report,
        stale.map((d) => d.id),
      );
    else if (stale.length > 0) await target.forget(stale);
    if (held.length > 0) await target.releaseFiles?.(held);
  };
  const rotate = async (filesDone: number) => {
    if (chunked.length > 0 || hasEnds(chunkedEnds)) await commit(filesDone);
    chunked = await Promise.all(chunking);
    chunkedEnds = chunkingEnds;
    chunking = [];
    chunkingEnds = noEnds();
    chunkingChars = 0;
  };
  /** Commits both batches in flight: this ingest then holds no file. */
  const drain = async (filesDone: number) => {
    await rotate(filesDone);
    await commit(filesDone);
    chunked = [];
    chunkedEnds = noEnds();
  };
  try {
    for (const [i, file] of files.entries()) {
      throwIfAborted(opts.signal);
      progress('read', i, file.path);
      // A big file comes in parts (documents ID, ID.p2, ...), committed as they fill batches.
      const base = documentIdFor(file.path);
      // Where writers share nothing else, a file stored in parts, or to be, is held while it is written.
      // Stored in parts: its second part is looked up before reading (which the check for parts past
      // its new end would do anyway). A file of one part stored as one is not held: a small file then
      // costs no lock, and can still interleave with another machine's ingest of a big version of it.
      let held = false;
      let partsAfter = true;
      if (target.holdFile) {
        held = file.bytes > (opts.partBytes ?? PART_BYTES);
        if (!held) held = partsAfter = (await target.document(`${base}.p2`)) !== undefined;
        if (held) await target.holdFile(base, () => drain(i));
      }
      let part = 0;
      for await (const doc of readDocumentParts(file.path, file.bytes, opts.partBytes)) {
        // Checked per part, not only per file: one big file is many parts and batches (minutes of work).
        throwIfAborted(opts.signal);
        // A file not read (binary, unreadable), or the note after its last part that its size changed.
        if (!('text' in doc)) {
          report.notes.push({ path: file.path, note: doc.note });
          break;
        }
        if (part > 0) progress('read', i, file.path);
        const id = part === 0 ? base : `${base}.p${part + 1}`;
        part++;
        fileBytes = Math.min(file.bytes, fileBytes + Buffer.byteLength(doc.text));
        const plan = planDocument(
          await target.document(id),
          id,
          file.path,
          doc.text,
          doc.notes,
          opts,
          report,
        );
        if (!plan) continue;
        // The job (the document's text) is not kept: the chunker has what it needs once called.
        const { job, ...planned } = plan;
        const pending = chunker.chunk(job).then((result) => finishDocument(planned, result, report));
        // Awaited later, with its batch; this keeps a failure meanwhile from counting as unhandled.
        pending.catch(() => {});
        chunking.push(pending);
        chunkingChars += doc.text.length;
        if (chunkingChars >= (opts.segmentChars ?? BATCH_TARGET_CHARS)) await rotate(i);
      }
      bytesDone += file.bytes;
      fileBytes = 0;
      // Parts past the file's new end (it shrank) go with its last part, as a replaced document's
      // old chunks do: in the batch being read, or in the one before if the last part closed it.
      const ends = chunking.length === 0 ? chunkedEnds : chunkingEnds;
      for (let n = Math.max(part, 1) + 1; partsAfter; n++) {
        const old = await target.document(`${base}.p${n}`);
        if (!old) break;
        ends.stale.push(old);
      }
      if (held) ends.held.push(base);
    }
    await drain(files.length);
  } finally {
    await chunker.close();
  }
  if (opts.prune) {
    const roots = paths.map((p) => resolve(p));
    const gone = vanished(await target.documents(), roots, new Set(files.paths()));
    if (gone.length > 0) await target.forget(gone);
    report.removed = gone.length;
  }
  return report;
}

/**
 * Writes what an importer yields (documents it chunked itself, ids to drop) in batch-sized commits of
 * whole documents. `produce` sees the documents stored when the import starts. Drops are committed with
 * the next batch, so a replacement is never half-visible.
 */
export async function importInto(
  target: IngestTarget,
  produce: (documents: DocumentRecord[]) => AsyncIterable<ImportItem>,
  opts: Pick<IngestOptions, 'segmentChars' | 'signal'>,
): Promise<IngestReport> {
  const report = emptyIngestReport([]);
  let pending: PendingDoc[] = [];
  let drops: string[] = [];
  let chars = 0;
  const flush = async () => {
    if (pending.length > 0) await target.writeBatch(pending, report, drops);
    else if (drops.length > 0) {
      const docs: DocumentRecord[] = [];
      for (const id of drops) {
        const doc = await target.document(id);
        if (doc) docs.push(doc);
      }
      await target.forget(docs);
    }
    report.removed += drops.length;
    pending = [];
    drops = [];
    chars = 0;
  };
  for await (const item of produce(await target.documents())) {
    throwIfAborted(opts.signal);
    for (const id of item.drop ?? []) if (await target.document(id)) drops.push(id);
    const doc = item.add && prepareImported(await target.document(item.add.id), item.add, report);
    if (doc) pending.push(doc);
    // An unchanged document that was also to be dropped is kept: it is its own replacement.
    else if (item.add) drops = drops.filter((id) => id !== item.add!.id);
    chars += item.add?.text.length ?? 0;
    if (chars >= (opts.segmentChars ?? BATCH_TARGET_CHARS)) await flush();
  }
  await flush();
  return report;
}
