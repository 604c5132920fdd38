/**
 * `rlm repair`: rebuilds every derived file (segment meta, BM25, links, vectors, manifest, documents)
 * from the chunk files, the source of truth. What cannot be recovered is dropped and reported, and the
 * files it came from can simply be ingested again.
 */

import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import { chunkKey } from '../engine/graph.ts';
import {
  buildMeta,
  chunksProblem,
  SEGMENT_VERSION,
  type SegmentChunksFile,
  segmentName,
} from '../engine/segment.ts';
import { embedRecords } from '../engine/segment-builder.ts';
import { assertNotAFile, exists, parseJson } from '../fsutil.ts';
import { buildRecords, memoryPending } from '../ingest/prepare.ts';
import { isJournalEntry, journalName } from '../memories/memory-model.ts';
import { Bm25Index, buildSegment } from '../search/bm25.ts';
import { createEmbedder, embedderConfig } from '../search/embedders/index.ts';
import { linkSegment, SignatureIndex, type SignedChunk } from '../search/linker.ts';
import { VectorIndex } from '../search/vectors.ts';
import type { ChunkRecord, DocumentRecord, Link, RepairOptions, RepairReport } from '../types.ts';
import { DirectoryPersistence } from './directory.ts';
import { readJournalFile } from './journal.ts';
import {
  checkDocuments,
  checkLinks,
  checkManifest,
  MANIFEST_FILE,
  type Manifest,
  SEGMENTS_DIR,
  segmentFile,
  VECTORS_DIR,
} from './manifest.ts';
import { salvageChunks } from './salvage.ts';

/** A document repair cannot keep, and where it came from. */
type DroppedDocument = RepairReport['dropped'][number];

/** The embedder spec that removes vector search. */
const NO_EMBEDDER = 'none';

export async function repairStore(dir: string, opts: RepairOptions = {}): Promise<RepairReport> {
  const abs = path.resolve(dir);
  const persistence = new DirectoryPersistence(
    abs,
    opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {},
  );
  await assertNotAFile(abs);
  const isStore =
    (await exists(path.join(abs, MANIFEST_FILE))) || (await exists(path.join(abs, SEGMENTS_DIR)));
  if (!isStore)
    throw new RlmError('STORE_MISSING', `no rlm store at ${abs} (nothing to repair)`, { dir: abs });
  const lock = await persistence.lock('repair');
  try {
    return await rebuild(abs, persistence, opts);
  } finally {
    await lock.release();
  }
}

async function tryRead<T>(
  file: string,
  check: (v: unknown, f: string) => T,
  actions: string[],
): Promise<T | null> {
  try {
    return check(parseJson(await fs.readFile(file, 'utf8'), file), file);
  } catch (err) {
    actions.push(`${path.basename(file)}: ${(err as Error).message.split('. Run')[0]}`);
    return null;
  }
}

async function rebuild(
  dir: string,
  persistence: DirectoryPersistence,
  opts: RepairOptions,
): Promise<RepairReport> {
  const actions: string[] = [];
  const manifest = await tryRead(path.join(dir, MANIFEST_FILE), checkManifest, actions);

  // 1. Chunk files: the source of truth. What cannot be parsed is salvaged record by record.
  const segDir = path.join(dir, SEGMENTS_DIR);
  const names = (await fs.readdir(segDir).catch(() => [] as string[]))
    .map((f) => /^(seg-\d+)\.chunks\.json$/.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .sort();
  const segments = new Map<string, ChunkRecord[]>();
  /** Segments read by salvage: their record positions no longer match the documents' `first`. */
  const salvaged = new Set<string>();
  for (const name of names) {
    const file = segmentFile(dir, name, 'chunks');
    const parsed = await tryRead(
      file,
      (v, f) => {
        const problem = chunksProblem(v as SegmentChunksFile, name);
        if (problem) throw new Error(`${f}: ${problem}`);
        return v as SegmentChunksFile;
      },
      actions,
    );
    if (parsed) {
      segments.set(name, parsed.chunks);
      continue;
    }
    const raw = await fs.readFile(file, 'utf8').catch(() => '');
    const records = salvageChunks(raw);
    segments.set(name, records);
    salvaged.add(name);
    actions.push(`salvaged ${records.length} readable chunks of segment ${name}`);
  }

  // 2. Documents: from the manifest's documents file, or rebuilt from the chunks.
  let documents: Map<string, DocumentRecord> | null = null;
  if (manifest) {
    const docs = await tryRead(path.join(dir, manifest.documents), checkDocuments, actions);
    if (docs) documents = new Map(docs.documents.map((d) => [d.id, d]));
  }
  if (!documents) {
    documents = documentsFromChunks(segments);
    actions.push(
      `rebuilt ${documents.size} document records from chunk files (their next ingest re-reads them)`,
    );
  }
  const dropped: DroppedDocument[] = [];
  for (const [id, doc] of documents) {
    const chunks = segments.get(doc.segment);
    const ok =
      chunks !== undefined &&
      (salvaged.has(doc.segment)
        ? hasAllChunks(chunks, doc)
        : doc.chunks === 0 ||
          (chunks[doc.first]?.document === id && chunks[doc.first + doc.chunks - 1]?.document === id));
    if (!ok) {
      documents.delete(id);
      dropped.push({ id, path: doc.path });
      actions.push(`dropped document ${id}${doc.path ? ` (${doc.path})` : ''}: its chunks are missing`);
    }
  }
  if (dropped.length > 0 && !(await opts.confirm?.(dropped))) {
    const chunkCount = [...documents.values()].reduce((n, d) => n + d.chunks, 0);
    return { segments: 0, documents: documents.size, chunks: chunkCount, actions, dropped, applied: false };
  }
  const used = new Set([...documents.values()].map((d) => d.segment));
  let nextSegment = Math.max(
    manifest?.nextSegment ?? 1,
    1 + Math.max(0, ...names.map((n) => Number(n.slice(4)))),
  );

  // Compaction: chunks of replaced or removed documents leave the segments they were sharing. A
  // compacted segment gets a new name, because readers cache segments by name as immutable.
  let compacted = 0;
  const live: string[] = [];
  for (const name of [...segments.keys()].filter((s) => used.has(s))) {
    const records = segments.get(name)!;
    const kept = records.filter((r) => documents.get(r.document)?.segment === name);
    if (kept.length === records.length && !salvaged.has(name)) {
      live.push(name);
      continue;
    }
    compacted += records.length - kept.length;
    const renamed = segmentName(nextSegment++);
    segments.set(renamed, kept);
    live.push(renamed);
    for (const doc of documents.values()) {
      if (doc.segment === name && doc.chunks === 0) documents.set(doc.id, { ...doc, segment: renamed });
    }
    for (const [i, r] of kept.entries()) {
      const doc = documents.get(r.document)!;
      if (r.ordinal === 0) documents.set(doc.id, { ...doc, segment: renamed, first: i });
    }
  }
  if (compacted > 0)
    actions.push(
      `compacted: removed ${plural(compacted, 'chunk')} of replaced, removed or dropped documents`,
    );

  // The memory journal is folded into a segment of its own, as a store's fold does: the rebuilt indexes
  // and vectors then cover those memories too (vector search only sees what a segment holds). The
  // commit names a new, empty journal.
  let memory = manifest?.memory;
  if (memory) {
    const { lines } = await readJournalFile(path.join(dir, memory.journal), 0);
    const entries = lines.flatMap((line) => {
      try {
        const e: unknown = JSON.parse(line);
        return isJournalEntry(e) && !documents.has(e.id) ? [e] : [];
      } catch {
        return [];
      }
    });
    if (entries.length > 0) {
      const name = segmentName(nextSegment++);
      const built = buildRecords(name, new Date().toISOString(), entries.map(memoryPending), []);
      segments.set(name, built.records);
      live.push(name);
      for (const d of built.documents) documents.set(d.id, d);
      memory = { ...memory, journal: journalName((manifest?.generation ?? 0) + 1) };
      actions.push(`folded ${plural(entries.length, 'journaled memory', 'journaled memories')} into ${name}`);
    }
  }

  // 3. Manual links.
  let manual: Link[] = [];
  if (manifest) manual = (await tryRead(path.join(dir, manifest.links), checkLinks, actions))?.links ?? [];

  // 4. Derived files of every live segment, relinked in order.
  const index = new Bm25Index();
  const signatures = new SignatureIndex();
  const alive = (c: SignedChunk) => documents.get(c.document)?.segment === c.segment;
  for (const name of live) {
    const records = segments.get(name)!;
    const bm25 = buildSegment(records.map((r) => ({ id: chunkKey(name, r.id), text: r.text })));
    index.addSegment(name, bm25);
    await persistence.writeSegment(name, {
      chunks: { version: SEGMENT_VERSION, segment: name, chunks: records },
      meta: buildMeta(name, records[0]?.createdAt ?? new Date().toISOString(), records),
      bm25,
      links: {
        version: SEGMENT_VERSION,
        segment: name,
        ...linkSegment(index, signatures, name, records, alive),
      },
    });
  }
  actions.push(`rebuilt meta, BM25 and links of ${plural(live.length, 'segment')}`);

  // 5. Vectors, when the store has (or is given) an embedder. They are built beside the old ones and
  // swapped in, so an embedder that fails midway leaves the store as it was.
  const spec = opts.embedder ?? manifest?.embedder?.spec;
  let embedder: Manifest['embedder'] = null;
  const vectorsDir = path.join(dir, VECTORS_DIR);
  if (spec === NO_EMBEDDER) {
    await fs.rm(vectorsDir, { recursive: true, force: true });
    if (manifest?.embedder) actions.push(`removed the embedder ${manifest.embedder.spec} and its vectors`);
  } else if (spec) {
    const emb = createEmbedder(spec, opts.env);
    const building = `${vectorsDir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      embedder = await embedderConfig(emb);
      const index = await VectorIndex.open(building, {
        dimensions: embedder.dimensions,
        embedder: embedder.spec,
      });
      for (const doc of documents.values()) {
        const records = segments.get(doc.segment)!.slice(doc.first, doc.first + doc.chunks);
        await embedRecords({ index, embedder: emb }, doc.segment, records, []);
      }
    } catch (err) {
      await fs.rm(building, { recursive: true, force: true });
      throw new RlmError(
        'PROVIDER',
        `repair: the embedder ${spec} failed (${(err as Error).message}); nothing was changed. ` +
          `Try again when it works, or \`rlm repair --embedder ${NO_EMBEDDER}\` to go on without vectors`,
        {},
        { cause: err },
      );
    }
    await fs.rm(vectorsDir, { recursive: true, force: true });
    await fs.rename(building, vectorsDir);
    actions.push(`rebuilt vectors with ${embedder.spec}`);
  }

  await persistence.commit({
    generation: (manifest?.generation ?? 0) + 1,
    nextSegment,
    segments: live,
    documents,
    manual: manual.filter((l) => documents.has(docOf(l.from)) && documents.has(docOf(l.to))),
    embedder,
    ...(memory ? { memory } : {}),
  });
  const chunkCount = [...documents.values()].reduce((n, d) => n + d.chunks, 0);
  return {
    segments: live.length,
    documents: documents.size,
    chunks: chunkCount,
    actions,
    dropped,
    applied: true,
  };
}

/** Every chunk 0..chunks-1 of `doc` is among `records`. */
function hasAllChunks(records: ChunkRecord[], doc: DocumentRecord): boolean {
  const seen = new Set<number>();
  for (const r of records) if (r.document === doc.id) seen.add(r.ordinal);
  for (let i = 0; i < doc.chunks; i++) if (!seen.has(i)) return false;
  return true;
}

function docOf(id: string): string {
  return id.slice(0, id.lastIndexOf(':'));
}

function documentsFromChunks(segments: Map<string, ChunkRecord[]>): Map<string, DocumentRecord> {
  const docs = new Map<string, DocumentRecord>();
  for (const [segment, records] of segments) {
    records.forEach((r, idx) => {
      if (r.ordinal === 0) {
        docs.set(r.document, {
          id: r.document,
          path: null,
          hash: '', // unknown: the next ingest of the file replaces this record
          bytes: 0,
          chunker: 'paragraph',
          chunks: 0,
          tokens: 0,
          ingestedAt: r.createdAt,
          segment,
          first: idx,
        });
      }
      const doc = docs.get(r.document);
      if (doc && doc.segment === segment) {
        doc.chunks++;
        doc.tokens += r.tokens;
        doc.bytes += Buffer.byteLength(r.text);
      }
    });
  }
  return docs;
}
