/**
 * `rlm repair`: checks every segment against its CRCs and rebuilds what does not check out, from the
 * chunk files (the source of truth): a segment whose files are intact and hold only live chunks is kept
 * as it is; the others (a damaged BM25 or links file, chunks of replaced or removed documents, a schema
 * 1/2 segment) are written again under a new name, their links carried over (those lost are computed
 * again). The documents file, the link count and the manifest are written anew, and vectors rebuilt when
 * there is an embedder. What cannot be recovered is dropped and reported, and the files it came from can
 * simply be ingested again. Segments are read one at a time, so memory stays at about one segment.
 */

import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import { FileBlob } from '../blob.ts';
import { isAccessFailure, isDenied, unreadable } from '../corrupt.ts';
import { DocumentCatalog } from '../engine/catalog.ts';
import { FormatSegment, segmentFiles } from '../engine/format-segment.ts';
import { LinkWindow } from '../engine/link-window.ts';
import { parseJournalLines } from '../engine/memory-tail.ts';
import { liveDocuments, rewriteSegments } from '../engine/purge.ts';
import { type DocRun, parseChunkId, recordAt, type Segment, segmentName } from '../engine/segment.ts';
import { embedRecords } from '../engine/segment-builder.ts';
import { assertNotAFile, exists, parseJson, tempPathFor } from '../fsutil.ts';
import { buildRecords, memoryPending } from '../ingest/prepare.ts';
import { DEFAULT_MEMORY_SETTINGS, type JournalEntry, journalName } from '../memories/memory-model.ts';
import { ANALYZER_VERSION } from '../search/analyzer.ts';
import { createEmbedder, embedderConfig } from '../search/embedders/index.ts';
import type { SignedChunk } from '../search/linker.ts';
import { buildTerms } from '../search/segment.ts';
import { VectorIndex } from '../search/vectors.ts';
import type {
  ChunkRecord,
  DocumentRecord,
  Link,
  MemoryConfig,
  RepairOptions,
  RepairReport,
} from '../types.ts';
import { DirectoryPersistence } from './directory.ts';
import { readDocuments } from './documents-log.ts';
import { readJournalFile } from './journal.ts';
import { chunksProblem, jsonLinks, type SegmentChunksFile, type SegmentLinks } from './legacy-segment.ts';
import {
  checkLinks,
  checkManifest,
  MANIFEST_FILE,
  type Manifest,
  SCHEMA_VERSION,
  SEGMENTS_DIR,
  segmentFile,
  segmentPath,
  storeFilesAmong,
  VECTORS_DIR,
} from './manifest.ts';
import { noLinks, RecordsSegment } from './records-segment.ts';
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
    (await exists(path.join(abs, MANIFEST_FILE))) ||
    storeFilesAmong(await fs.readdir(abs).catch(() => [])).length > 0;
  if (!isStore)
    throw new RlmError('STORE_MISSING', `no rlm store at ${abs} (nothing to repair)`, { dir: abs });
  const lock = await persistence.lock('repair');
  try {
    return await rebuild(abs, persistence, opts);
  } finally {
    await lock.release();
  }
}

/**
 * Rethrows a failure to read `file` that is about access, not its bytes (as ACCESS_DENIED for a
 * permission): such a file is not damaged, and a repair that took it for damage would drop what it holds.
 */
function throwIfAccess(err: unknown, file: string): void {
  const e = err as NodeJS.ErrnoException | undefined;
  if (isDenied(e?.code)) throw unreadable(e?.path ?? file, e?.code as string);
  if (isAccessFailure(err)) throw err;
}

async function tryRead<T>(
  file: string,
  check: (v: unknown, f: string) => T,
  actions: string[],
): Promise<T | null> {
  try {
    return check(parseJson(await fs.readFile(file, 'utf8'), file), file);
  } catch (err) {
    throwIfAccess(err, file);
    actions.push(`${path.basename(file)}: ${(err as Error).message.split('. Run')[0]}`);
    return null;
  }
}

/** What the chunk file of a segment holds, as far as it can be read. */
interface Inspected {
  /** `binary`: a schema 3 chunk file; `json`: a schema 1/2 one (then `records` were read from it). */
  kind: 'binary' | 'json';
  /** Document runs, from the header or the records; none when nothing could be read. */
  docs: DocRun[];
  /** Positions of chunks whose text cannot be read. */
  bad: Set<number>;
  /** JSON chunk files read record by record: positions no longer match the documents file. */
  salvaged: boolean;
  /** Per document of the segment: tokens, UTF-8 bytes, first chunk's time (rebuilding lost records). */
  sums: Map<string, { tokens: number; bytes: number; createdAt: string; chunks: number }>;
  chunkCount: number;
}

function sumsOf(
  docs: DocRun[],
  tokens: (i: number) => number,
  bytes: (i: number) => number,
  createdAt: (i: number) => string,
): Inspected['sums'] {
  const sums: Inspected['sums'] = new Map();
  for (const d of docs) {
    let t = 0;
    let b = 0;
    for (let i = d.first; i < d.first + d.count; i++) {
      t += tokens(i);
      b += bytes(i);
    }
    sums.set(d.id, { tokens: t, bytes: b, createdAt: createdAt(d.first), chunks: d.count });
  }
  return sums;
}

/** A schema 3 segment of the store folder. */
function binarySegment(dir: string, name: string): FormatSegment {
  const file = (kind: 'chunks' | 'bm25' | 'links') => new FileBlob(segmentPath(dir, name, kind));
  return new FormatSegment(name, { chunks: file('chunks'), bm25: file('bm25'), links: file('links') });
}

/** The records of a schema 1/2 chunk file, read record by record when it does not parse. */
async function jsonRecords(
  dir: string,
  name: string,
  actions: string[] | null,
): Promise<{ records: ChunkRecord[]; salvaged: boolean }> {
  const file = segmentFile(dir, name, 'chunks');
  const raw = await fs.readFile(file, 'utf8').catch((err: unknown) => {
    throwIfAccess(err, file);
    return '';
  });
  try {
    const parsed = JSON.parse(raw) as SegmentChunksFile;
    const problem = chunksProblem(parsed, name);
    if (problem) throw new Error(problem);
    return { records: parsed.chunks, salvaged: false };
  } catch (err) {
    const records = salvageChunks(raw);
    actions?.push(`${path.basename(file)}: ${(err as Error).message}`);
    actions?.push(`salvaged ${records.length} readable chunks of segment ${name}`);
    return { records, salvaged: true };
  }
}

async function inspect(dir: string, name: string, binary: boolean, actions: string[]): Promise<Inspected> {
  if (binary) {
    const seg = binarySegment(dir, name);
    try {
      const bad = seg.damagedChunks();
      if (bad === null) {
        actions.push(`${name}.chunks: its header does not check out; none of its chunks can be read`);
        return { kind: 'binary', docs: [], bad: new Set(), salvaged: false, sums: new Map(), chunkCount: 0 };
      }
      const h = seg.columns();
      if (bad.size > 0) actions.push(`${name}.chunks: ${plural(bad.size, 'chunk')} fail their CRC check`);
      const sums = sumsOf(
        h.docs,
        (i) => h.tokens(i),
        (i) => (bad.has(i) ? 0 : h.utf8Bytes(i) >= 0 ? h.utf8Bytes(i) : Buffer.byteLength(seg.text(i))),
        () => h.createdAt,
      );
      return { kind: 'binary', docs: [...h.docs], bad, salvaged: false, sums, chunkCount: h.count };
    } finally {
      seg.close();
    }
  }
  const { records, salvaged } = await jsonRecords(dir, name, actions);
  const docs: DocRun[] = [];
  records.forEach((r, i) => {
    const last = docs[docs.length - 1];
    if (last && last.id === r.document) last.count++;
    else docs.push({ id: r.document, first: i, count: 1 });
  });
  const sums = sumsOf(
    docs,
    (i) => records[i]!.tokens,
    (i) => Buffer.byteLength(records[i]!.text),
    (i) => records[i]!.createdAt,
  );
  return { kind: 'json', docs, bad: new Set(), salvaged, sums, chunkCount: records.length };
}

/** Segment names in the folder with a chunk file, and which are schema 3. */
async function segmentNames(dir: string): Promise<Map<string, boolean>> {
  const files = await fs.readdir(path.join(dir, SEGMENTS_DIR)).catch((err: unknown) => {
    // A folder that cannot be listed is not an empty one: every document would go as lost.
    throwIfAccess(err, path.join(dir, SEGMENTS_DIR));
    return [] as string[];
  });
  const names = new Map<string, boolean>();
  for (const f of files) {
    const json = /^(seg-\d+)\.chunks\.json$/.exec(f)?.[1];
    const binary = /^(seg-\d+)\.chunks$/.exec(f)?.[1];
    if (binary) names.set(binary, true);
    else if (json && !names.has(json)) names.set(json, false);
  }
  return new Map([...names].sort((a, b) => Number(a[0].slice(4)) - Number(b[0].slice(4))));
}

/**
 * Whether `doc` can be kept as its segment holds it: its chunks are where its record says, all readable.
 * A document of a segment read record by record gets its position there again.
 */
function placeDocument(doc: DocumentRecord, seg: Inspected | undefined): DocumentRecord | null {
  if (!seg) return null;
  if (doc.chunks === 0) return doc;
  const run = seg.docs.find((r) => r.id === doc.id && (seg.salvaged || r.first === doc.first));
  if (!run || run.count < doc.chunks) return null;
  if (seg.salvaged) return run.count === doc.chunks ? { ...doc, first: run.first } : null;
  for (let i = doc.first; i < doc.first + doc.chunks; i++) if (seg.bad.has(i)) return null;
  return doc;
}

/** The number a generation file is named by. */
function generationOf(name: string): number {
  return Number(/\d+/.exec(name)?.[0] ?? 0);
}

/**
 * The documents and links files of a store whose manifest is lost, as it would have named them: the
 * newest documents base with the logs written after it, and the newest links file.
 */
function orphanedFiles(
  storeFiles: readonly string[],
  actions: string[],
): { documents?: string; documentLog?: string[]; links?: string } {
  const newest = (re: RegExp) =>
    storeFiles.filter((n) => re.test(n)).sort((a, b) => generationOf(a) - generationOf(b));
  const documents = newest(/^documents-\d+\.json$/).at(-1);
  const links = newest(/^links-\d+\.json$/).at(-1);
  const documentLog =
    documents === undefined
      ? []
      : newest(/^documents-\d+\.delta\.json$/).filter((n) => generationOf(n) > generationOf(documents));
  if (documents !== undefined || links !== undefined)
    actions.push(
      `read ${[documents, ...documentLog, links].filter((n) => n !== undefined).join(', ')} as the store's (the newest in the folder; the manifest naming them is lost)`,
    );
  return {
    ...(documents === undefined ? {} : { documents, documentLog }),
    ...(links === undefined ? {} : { links }),
  };
}

/**
 * The memory journal of a store whose manifest is lost: the newest in the folder (a commit names a new
 * one; older ones are what a crash left before their removal). Its memories are the only copy of what
 * was remembered since the last fold. The settings lived in the manifest: they go back to the defaults.
 */
function orphanedJournal(storeFiles: readonly string[], actions: string[]): MemoryConfig | undefined {
  const journal = storeFiles
    .filter((n) => n.startsWith('memories-'))
    .sort((a, b) => generationOf(a) - generationOf(b))
    .at(-1);
  if (journal === undefined) return undefined;
  actions.push(
    `${journal}: read as the memory journal (the newest in the folder; the manifest naming it is lost); memory settings are back to their defaults`,
  );
  return { journal, settings: DEFAULT_MEMORY_SETTINGS };
}

async function rebuild(
  dir: string,
  persistence: DirectoryPersistence,
  opts: RepairOptions,
): Promise<RepairReport> {
  const actions: string[] = [];
  const manifest = await tryRead(path.join(dir, MANIFEST_FILE), checkManifest, actions);
  const storeFiles = storeFilesAmong(await fs.readdir(dir));
  // Above every generation a file of the folder is named by, not only the manifest's: a lost manifest's
  // files are still there, and a later commit must not take one of their names.
  const generation = Math.max(manifest?.generation ?? 0, ...storeFiles.map(generationOf)) + 1;

  // 1. Chunk files, the source of truth, checked one at a time.
  const names = await segmentNames(dir);
  const inspected = new Map<string, Inspected>();
  for (const [name, binary] of names) inspected.set(name, await inspect(dir, name, binary, actions));

  // 2. Documents: from the manifest's documents file (or, the manifest lost, the newest one in the
  // folder and the logs after it), else rebuilt from the chunk files.
  const files = manifest ?? orphanedFiles(storeFiles, actions);
  let documents: Map<string, DocumentRecord> | null = null;
  if (files.documents !== undefined) {
    try {
      documents = new Map(
        (await readDocuments(dir, { documents: files.documents, documentLog: files.documentLog ?? [] }))
          .documents,
      );
    } catch (err) {
      throwIfAccess(err, path.join(dir, files.documents));
      actions.push(
        (err as Error).message
          .split('. Run')[0]!
          .replace(/^store file (\S+) is corrupt: /, (_, f: string) => `${path.basename(f)}: `),
      );
    }
  }
  if (!documents) {
    documents = documentsFromChunks(inspected);
    actions.push(
      `rebuilt ${documents.size} document records from chunk files (their next ingest re-reads them)`,
    );
  }
  const dropped: DroppedDocument[] = [];
  for (const [id, doc] of documents) {
    const placed = placeDocument(doc, inspected.get(doc.segment));
    if (placed) documents.set(id, placed);
    else {
      documents.delete(id);
      dropped.push({ id, path: doc.path });
      actions.push(`dropped document ${id}${doc.path ? ` (${doc.path})` : ''}: its chunks are missing`);
    }
  }
  // The journal, read before anything is decided: a line of it that is not a memory (damage; a torn
  // last line is never read) is a memory repair cannot keep, dropped only when confirmed.
  let memory = manifest ? manifest.memory : orphanedJournal(storeFiles, actions);
  const journaled: JournalEntry[] = [];
  if (memory) {
    const { lines } = await readJournalFile(path.join(dir, memory.journal), 0);
    for (const [i, line] of lines.entries()) {
      const [entry] = parseJournalLines([line]).entries;
      if (entry) {
        journaled.push(entry);
        continue;
      }
      const id = /"id"\s*:\s*"(mem-[^"]+)"/.exec(line)?.[1];
      dropped.push({ id: id ?? `${memory.journal} line ${i + 1}`, path: null });
      actions.push(
        `${memory.journal} line ${i + 1} is not a memory (damaged)${id ? `: dropped memory ${id}` : ''}`,
      );
    }
  }
  if (dropped.length > 0 && !(await opts.confirm?.(dropped))) {
    const chunkCount = [...documents.values()].reduce((n, d) => n + d.chunks, 0);
    return { segments: 0, documents: documents.size, chunks: chunkCount, actions, dropped, applied: false };
  }
  let nextSegment = Math.max(
    manifest?.nextSegment ?? 1,
    1 + Math.max(0, ...[...names.keys()].map((n) => Number(n.slice(4)))),
  );

  // 3. Which segments stay as they are, in the manifest's order (then by name).
  const liveIn = liveDocuments(documents);
  const order = [
    ...(manifest?.segments ?? []).filter((s) => liveIn.has(s) && inspected.has(s)),
    ...[...inspected.keys()].filter((s) => liveIn.has(s) && !manifest?.segments.includes(s)),
  ];
  const opened = new Map<string, FormatSegment>();
  const openBinary = (name: string): FormatSegment => {
    let seg = opened.get(name);
    if (!seg) {
      seg = binarySegment(dir, name);
      opened.set(name, seg);
    }
    return seg;
  };
  const renamed = new Map<string, string>();
  const lostLinks = new Set<string>();
  let compacted = 0;
  let rebuiltIndexes = 0;
  for (const name of order) {
    const seg = inspected.get(name)!;
    const live = liveIn.get(name)!.reduce((n, d) => n + d.chunks, 0);
    compacted += seg.chunkCount - live;
    let rewrite = seg.kind === 'json' || seg.salvaged || live < seg.chunkCount || seg.bad.size > 0;
    if (seg.kind === 'binary') {
      // Checked through an object of its own: reading every byte fills caches no later step needs.
      const binary = binarySegment(dir, name);
      const linksOk = binary.linksIntact();
      if (!linksOk) {
        lostLinks.add(name);
        actions.push(`${name}.links does not check out: its links are computed again`);
      }
      const indexOk = binary.indexIntact(ANALYZER_VERSION);
      if (!indexOk) {
        rebuiltIndexes++;
        actions.push(`${name}.bm25 does not check out (or has older analysis rules): rebuilt`);
      }
      rewrite ||= !linksOk || !indexOk;
      binary.close();
    }
    if (rewrite) renamed.set(name, segmentName(nextSegment++));
  }
  if (compacted > 0)
    actions.push(
      `compacted: removed ${plural(compacted, 'chunk')} of replaced, removed or dropped documents`,
    );
  const converted = order.filter((s) => inspected.get(s)!.kind === 'json').length;
  if (converted > 0)
    actions.push(`rewrote ${plural(converted, 'segment')} of the schema 1/2 format as schema 3`);

  // 4. Segments written again, in order, one at a time.
  const final = order.map((s) => renamed.get(s) ?? s);
  const written = new Set<string>();
  const open = (name: string): Segment => {
    if (!renamed.has(name)) return openBinary(name);
    const seg = inspected.get(name)!;
    if (seg.kind === 'binary') {
      // Read once, for its own rewrite: not kept.
      const binary = binarySegment(dir, name);
      return lostLinks.has(name) ? withoutLinks(binary) : binary;
    }
    return legacyRecords(dir, name, seg, lostLinks, actions);
  };
  const finalOpen = (name: string): Segment => (written.has(name) ? openBinary(name) : open(name));
  await rewriteSegments(
    open,
    order,
    renamed,
    documents,
    async (name, files) => {
      await persistence.writeSegment(name, files);
      written.add(name);
    },
    (name, records, terms) => {
      const from = [...renamed].find(([, to]) => to === name)?.[0];
      if (from === undefined || !lostLinks.has(from)) return undefined;
      const at = final.indexOf(name);
      const window = LinkWindow.load(final.slice(0, at), finalOpen);
      const docs = documents!;
      return window.link(
        name,
        records,
        terms,
        (c: SignedChunk) => docs.get(c.document)?.segment === c.segment,
      );
    },
  );
  for (const seg of opened.values()) seg.close();
  opened.clear();
  const kept = order.length - renamed.size;
  actions.push(
    `checked ${plural(order.length, 'segment')}: ${kept} intact, ${plural(renamed.size, 'segment')} written again` +
      (rebuiltIndexes > 0 ? ` (${plural(rebuiltIndexes, 'index', 'indexes')} rebuilt)` : ''),
  );

  // The memory journal is folded into a segment of its own, as a store's fold does: the rebuilt indexes
  // and vectors then cover those memories too (vector search only sees what a segment holds). The
  // commit names a new, empty journal.
  if (memory) {
    const entries = journaled.filter((e) => !documents.has(e.id));
    if (entries.length > 0) {
      const name = segmentName(nextSegment++);
      const built = buildRecords(name, new Date().toISOString(), entries.map(memoryPending), []);
      for (const d of built.documents) documents.set(d.id, d);
      const terms = buildTerms(built.records.map((r) => r.text));
      const window = LinkWindow.load(final, openBinary);
      const docs = documents;
      const links = window.link(
        name,
        built.records,
        terms,
        (c) => docs.get(c.document)?.segment === c.segment,
      );
      await persistence.writeSegment(
        name,
        segmentFiles(name, built.records[0]!.createdAt, built.records, terms, links),
      );
      final.push(name);
      memory = { ...memory, journal: journalName(generation) };
      actions.push(`folded ${plural(entries.length, 'journaled memory', 'journaled memories')} into ${name}`);
    }
  }
  for (const seg of opened.values()) seg.close();
  opened.clear();

  // 5. Manual links, and the live related_to links counted again.
  let manual: Link[] = [];
  if (files.links !== undefined)
    manual = (await tryRead(path.join(dir, files.links), checkLinks, actions))?.links ?? [];
  // Both ends must name a chunk the store holds: a document gone, or an id no reader resolves (an older
  // rlm stored `DOC:1.0` as given), leaves a link that counts but that nothing lists.
  const holds = (id: string) => {
    const chunk = parseChunkId(id);
    const doc = chunk ? documents.get(chunk.document) : undefined;
    return doc !== undefined && chunk !== null && chunk.ordinal < doc.chunks;
  };
  const livingManual = manual.filter((l) => holds(l.from) && holds(l.to));
  if (livingManual.length < manual.length)
    actions.push(
      `dropped ${plural(manual.length - livingManual.length, 'manual link')} whose ends name no chunk of the store`,
    );
  const related = countLinks(final, (name) => binarySegment(dir, name), documents);
  for (const seg of opened.values()) seg.close();
  opened.clear();

  // 6. Vectors, when the store has (or is given) an embedder. They are built beside the old ones and
  // swapped in, so an embedder that fails midway leaves the store as it was.
  const spec = opts.embedder ?? manifest?.embedder?.spec;
  let embedder: Manifest['embedder'] = null;
  const vectorsDir = path.join(dir, VECTORS_DIR);
  if (spec === NO_EMBEDDER) {
    await fs.rm(vectorsDir, { recursive: true, force: true });
    if (manifest?.embedder) actions.push(`removed the embedder ${manifest.embedder.spec} and its vectors`);
  } else if (spec) {
    const emb = createEmbedder(spec, opts.env);
    const building = tempPathFor(vectorsDir);
    try {
      embedder = await embedderConfig(emb);
      const index = await VectorIndex.open(building, {
        dimensions: embedder.dimensions,
        embedder: embedder.spec,
      });
      for (const [segment, docs] of liveDocuments(documents)) {
        const seg = openBinary(segment);
        for (const doc of docs) {
          const texts = seg.texts(doc.first, doc.first + doc.chunks);
          const records = texts.map((text, i) => recordAt(seg.columns(), doc.first + i, text));
          await embedRecords({ index, embedder: emb }, segment, records, []);
        }
        seg.close();
        opened.delete(segment);
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
    generation,
    nextSegment,
    segments: final,
    documents: new DocumentCatalog(documents.values()),
    manual: livingManual,
    embedder,
    schema: SCHEMA_VERSION,
    related,
    legacy: [],
    ...(memory ? { memory } : {}),
  });
  const chunkCount = [...documents.values()].reduce((n, d) => n + d.chunks, 0);
  return {
    segments: final.length,
    documents: documents.size,
    chunks: chunkCount,
    actions,
    dropped,
    applied: true,
  };
}

/** A segment whose links file was lost: its chunks as they are, no links, empty signatures. */
function withoutLinks(seg: FormatSegment): Segment {
  const links = noLinks(seg.columns().count);
  return {
    name: seg.name,
    paths: undefined,
    columns: () => seg.columns(),
    text: (i) => seg.text(i),
    texts: (a, b) => seg.texts(a, b),
    bm25: () => seg.bm25(),
    links: () => links,
    close: () => seg.close(),
  };
}

/**
 * A schema 1/2 segment as its chunk file's records (record by record when it does not parse), with its
 * links file when that reads and covers them; else its links are computed again.
 */
function legacyRecords(
  dir: string,
  name: string,
  seg: Inspected,
  lostLinks: Set<string>,
  actions: string[],
): Segment {
  // Read again here (inspect dropped them): one segment's records are held at a time.
  const records = readRecordsSync(dir, name, seg);
  let links: SegmentLinks | null = null;
  try {
    const raw = parseJson<SegmentLinks>(readFileSync(segmentFile(dir, name, 'links'), 'utf8'), name);
    if (
      Array.isArray(raw?.related) &&
      Array.isArray(raw.signatures) &&
      raw.signatures.length === seg.chunkCount
    )
      links = raw;
  } catch (err) {
    throwIfAccess(err, segmentFile(dir, name, 'links'));
    // lost: computed again below
  }
  if (!links && !lostLinks.has(name)) {
    lostLinks.add(name);
    actions.push(`${name}.links.json does not read: its links are computed again`);
  }
  const loaded = links;
  return new RecordsSegment(name, records, loaded ? (columns) => jsonLinks(loaded, columns) : undefined);
}

function readRecordsSync(dir: string, name: string, seg: Inspected): ChunkRecord[] {
  const raw = (() => {
    try {
      return readFileSync(segmentFile(dir, name, 'chunks'), 'utf8');
    } catch (err) {
      throwIfAccess(err, segmentFile(dir, name, 'chunks'));
      return '';
    }
  })();
  if (!seg.salvaged) {
    try {
      return (JSON.parse(raw) as SegmentChunksFile).chunks;
    } catch {
      // fall through to record by record
    }
  }
  return salvageChunks(raw);
}

/** The live related_to links of the store, counted over every segment's links. */
function countLinks(
  segments: readonly string[],
  open: (name: string) => Segment,
  documents: ReadonlyMap<string, DocumentRecord>,
): number {
  const live = (segment: string, id: string) => {
    const parsed = parseChunkId(id);
    const doc = parsed && documents.get(parsed.document);
    return !!doc && doc.segment === segment && parsed.ordinal < doc.chunks;
  };
  const runs = liveDocuments(documents);
  let count = 0;
  for (const name of segments) {
    const seg = open(name);
    const alive = new Uint8Array(seg.columns().count);
    for (const d of runs.get(name) ?? []) alive.fill(1, d.first, d.first + d.chunks);
    for (const e of seg.links().all()) if (alive[e.fromIdx] === 1 && live(e.toSegment, e.to)) count++;
    seg.close();
  }
  return count;
}

/** Document records rebuilt from what the chunk files hold (the documents file was lost). */
function documentsFromChunks(segments: Map<string, Inspected>): Map<string, DocumentRecord> {
  const docs = new Map<string, DocumentRecord>();
  for (const [segment, seg] of segments) {
    for (const run of seg.docs) {
      const sum = seg.sums.get(run.id)!;
      // A later segment holds a later version of a document: it wins.
      docs.set(run.id, {
        id: run.id,
        path: null,
        hash: '', // unknown: the next ingest of the file replaces this record
        bytes: sum.bytes,
        chunker: 'paragraph',
        chunks: run.count,
        tokens: sum.tokens,
        ingestedAt: sum.createdAt,
        segment,
        first: run.first,
      });
    }
  }
  return docs;
}
