/**
 * The documents of a commit as a base file and a log of changes (schema 3, memory/SCHEMA.md): a commit
 * writes only the records it added or changed (`documents-G.delta.json`), so the cost of a commit does
 * not grow with the store; once the log outweighs half the base (or holds 32 files), and at every commit
 * that removes a document (whose record must then be in no file), the commit writes a whole new base
 * (`documents-G.json`) and starts an empty log. Over an ingest every record is written a few times, not
 * once per commit.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DocumentCatalog } from '../engine/catalog.ts';
import { corrupt, parseJson, writeFileAtomic } from '../fsutil.ts';
import { jsonPieces } from '../json-pieces.ts';
import { checkDocuments, checkDocumentsDelta, generationFile } from './manifest.ts';

/** Log files before the next commit writes a whole base. */
const MAX_LOG_FILES = 32;
/** Log bytes allowed beside a small base before it is rewritten, whatever its size. */
const MIN_LOG_BYTES = 256 * 1024;

/** What the manifest names for documents: a base file and the log over it, oldest first. */
export interface DocumentFiles {
  documents: string;
  documentLog?: string[];
}

/** The name of the log file a commit of generation `g` writes. */
function deltaFile(generation: number): string {
  return `documents-${String(generation).padStart(8, '0')}.delta.json`;
}

/**
 * Reads the base and applies the log; STORE_CORRUPT names the first file that does not read. Also
 * returns the files' sizes, which decide when the next commit writes a base again.
 */
export async function readDocuments(
  dir: string,
  files: DocumentFiles,
): Promise<{ documents: DocumentCatalog; sizes: { base: number; log: number } }> {
  const base = path.join(dir, files.documents);
  const read = await readOrCorrupt(base);
  const documents = new DocumentCatalog(checkDocuments(read.value, base).documents);
  const sizes = { base: read.bytes, log: 0 };
  for (const name of files.documentLog ?? []) {
    const file = path.join(dir, name);
    const { value, bytes } = await readOrCorrupt(file);
    const delta = checkDocumentsDelta(value, file);
    for (const id of delta.remove) documents.delete(id);
    for (const d of delta.put) documents.set(d.id, d);
    sizes.log += bytes;
  }
  return { documents, sizes };
}

async function readOrCorrupt(file: string): Promise<{ value: unknown; bytes: number }> {
  let raw: string;
  try {
    raw = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw corrupt(file, 'file is missing');
    throw err;
  }
  return { value: parseJson(raw, file), bytes: raw.length };
}

/**
 * Writes the documents of a commit: the changes since `before` (the documents this process last read
 * or committed, told apart by the catalog's stamps, memory/engine/catalog.ts) as a log file, or a new
 * base when there is no `before` or the log has grown too long.
 */
export class DocumentsWriter {
  private before: DocumentCatalog | undefined;
  private files: DocumentFiles | undefined;
  private baseBytes = 0;
  private logBytes = 0;

  /** The documents as committed (read or written): what the next commit is compared with. */
  committed(documents: DocumentCatalog, files: DocumentFiles, sizes?: { base: number; log: number }): void {
    this.before = documents;
    this.files = files;
    this.baseBytes = sizes?.base ?? Number.POSITIVE_INFINITY;
    this.logBytes = sizes?.log ?? 0;
  }

  /**
   * Writes the files for generation `generation`'s `documents`; returns what the manifest names, and
   * `done` to call once that manifest is in place (until then the last commit stays what is compared).
   */
  async write(
    dir: string,
    generation: number,
    documents: DocumentCatalog,
  ): Promise<{ files: DocumentFiles; done: () => void }> {
    const before = this.before;
    const files = this.files;
    if (before && files && (files.documentLog?.length ?? 0) < MAX_LOG_FILES) {
      const { put, remove } = documents.changesSince(before);
      const json = JSON.stringify({ version: 1, put, remove });
      // A removal writes a whole base: what was deleted must leave no file (memory/SCHEMA.md).
      if (remove.length === 0 && this.logBytes + json.length <= Math.max(MIN_LOG_BYTES, this.baseBytes / 2)) {
        const name = deltaFile(generation);
        await writeFileAtomic(path.join(dir, name), json);
        const next = { documents: files.documents, documentLog: [...(files.documentLog ?? []), name] };
        const sizes = { base: this.baseBytes, log: this.logBytes + json.length };
        return { files: next, done: () => this.committed(documents, next, sizes) };
      }
    }
    const name = generationFile('documents', generation);
    let bytes = 0;
    await writeFileAtomic(
      path.join(dir, name),
      (function* () {
        // values(), not an array of them: a base holds every record of the store and is written again over
        // a long ingest; decoded all at once (some 18 MB of objects at 36,000 documents), they made the
        // ingest's peak grow with the store.
        for (const piece of jsonPieces({ version: 1, documents: documents.values() })) {
          bytes += piece.length;
          yield piece;
        }
      })(),
    );
    const next = { documents: name };
    return { files: next, done: () => this.committed(documents, next, { base: bytes, log: 0 }) };
  }
}
