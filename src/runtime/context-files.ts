/**
 * Reading a run's `--context` files and folders: the scan and the decoding a store's ingest does
 * (memory/ingest/files.ts: ignore rules, binary detection, UTF-8 repair), and nothing more. The text is the
 * run's `context` at once; chunking and indexing wait until model code asks for them (lazy-index.ts).
 */
import { promises as fs } from 'node:fs';
import { readDocumentParts } from '../../memory/ingest/file-parts.ts';
import { documentIdFor, readDocument, type ScanResult, scanPaths } from '../../memory/ingest/files.ts';
import { DEFAULT_MAX_CONTEXT_CHARS as MAX_STRING_CHARS } from '../sandbox/limits.ts';

/** One document of the context: a whole file, or a part of a file too big to be one string. */
export interface ContextFile {
  /** The id its store document gets (memory/ingest/files.ts `documentIdFor`; parts `ID.p2`, ...). */
  id: string;
  /** Absolute path of the file. */
  path: string;
  text: string;
  /** Size and modification time when it was read: the lazy index checks the file is still the same. */
  bytes: number;
  mtimeMs: number;
}

/** What reading gave: the documents in path order, the files left out with why, what the scan passed over. */
export interface ReadFiles {
  files: ContextFile[];
  notes: { path: string; note: string }[];
  passedOver: ScanResult['passedOver'];
}

/** Files read at once: enough to keep the disk busy, few enough that a folder of thousands stays flat. */
const READ_CONCURRENCY = 8;

/** Reads `paths` (files and folders) as text, in the order a store ingest takes them. */
export async function readContextFiles(paths: string[], signal?: AbortSignal): Promise<ReadFiles> {
  const scan = await scanPaths(paths, signal === undefined ? {} : { signal });
  const notes = [...scan.notes];
  const read: ContextFile[][] = new Array(scan.files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < scan.files.length) {
      signal?.throwIfAborted();
      const i = next++;
      const { path } = scan.files[i]!;
      read[i] = await readOne(path, notes);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, scan.files.length) }, worker));
  return { files: read.flat(), notes, passedOver: scan.passedOver };
}

/** A file as one document, or as parts when it may be too long for one string. */
async function readOne(path: string, notes: { path: string; note: string }[]): Promise<ContextFile[]> {
  // Taken before the read: a change after it shows as a newer time when the index checks.
  let st: { size: number; mtimeMs: number };
  try {
    st = await fs.stat(path);
  } catch {
    notes.push({ path, note: 'vanished before it was read' });
    return [];
  }
  const id = documentIdFor(path);
  const base = { path, bytes: st.size, mtimeMs: st.mtimeMs };
  if (st.size <= MAX_STRING_CHARS) {
    const doc = await readDocument(path);
    if (!('text' in doc)) {
      notes.push({ path, note: doc.note });
      return [];
    }
    return [{ id, text: doc.text, ...base }];
  }
  // Too long to be sure it decodes into one string: parts as a store ingest makes them (memory/SCHEMA.md), so their ids are the store's.
  const out: ContextFile[] = [];
  for await (const doc of readDocumentParts(path, st.size)) {
    if (!('text' in doc)) {
      notes.push({ path, note: doc.note });
      break;
    }
    out.push({ id: out.length === 0 ? id : `${id}.p${out.length + 1}`, text: doc.text, ...base });
  }
  return out;
}
