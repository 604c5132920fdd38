/**
 * Persistence of a chunk graph in a folder of JSON files (see memory/SCHEMA.md). Segment files are
 * written once and never changed; a commit writes new documents and links files and then swaps the
 * manifest, so a process killed at any moment leaves the previous commit intact.
 */
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { isRlmError } from '../../core/errors.ts';
import { FileBlob } from '../blob.ts';
import { ACCESS_FILE, ACCESS_LOG, AccessLog } from '../engine/access.ts';
import { FormatSegment } from '../engine/format-segment.ts';
import type { SegmentSource } from '../engine/graph.ts';
import type { CommittedState, Persistence, SegmentFiles, StoreLock } from '../engine/persistence.ts';
import type { Segment } from '../engine/segment.ts';
import { corrupt, exists, isTempName, parseJson, readJson, writeFileAtomic } from '../fsutil.ts';
import { TOKENIZER } from '../ingest/tokens.ts';
import { jsonPieces } from '../json-pieces.ts';
import { DocumentsWriter, readDocuments } from './documents-log.ts';
import { appendJournalLine, readJournalFile } from './journal.ts';
import { LegacySegment } from './legacy-segment.ts';
import { acquireLock, isLeftoverLockFile, LOCK_FILE, type LockOptions } from './lock.ts';
import {
  BINARY_SCHEMA,
  checkLinks,
  checkManifest,
  generationFile,
  isGenerationFile,
  MANIFEST_FILE,
  type Manifest,
  SCHEMA_VERSION,
  SEGMENTS_DIR,
  STORE_FORMAT,
  segmentPath,
  VECTORS_DIR,
} from './manifest.ts';

/**
 * Whether `name`, an entry of a store folder, is one a store opens by that name: its manifest, documents,
 * links and journal files, access files, lock, `segments/` and `vectors/`. Anything else in the folder
 * (a store made in a project's folder with `--create`) is never opened.
 */
export function isStoreEntry(name: string): boolean {
  return (
    [MANIFEST_FILE, ACCESS_FILE, ACCESS_LOG, LOCK_FILE, SEGMENTS_DIR, VECTORS_DIR].includes(name) ||
    isGenerationFile(name)
  );
}

export interface DirectoryOptions {
  /** How long a writer waits for another one, ms (default 10000), before STORE_LOCKED. */
  lockWaitMs?: number;
  /** Called once when a writer starts waiting for another. */
  onLockWait?: LockOptions['onWait'];
}

/**
 * Opens segments by name: schema 3 segments through positioned reads of their three files, segments of a
 * schema 1/2 store (named in `legacy`) through their JSON files. A bad file is STORE_CORRUPT naming it.
 */
class DirectorySource implements SegmentSource {
  private readonly dir: string;
  /** Segments in the JSON format: only ever grows (a rewritten segment gets a new name). */
  readonly legacy = new Set<string>();

  constructor(dir: string) {
    this.dir = dir;
  }

  segment(name: string): Segment {
    if (this.legacy.has(name)) return new LegacySegment(this.dir, name);
    const file = (kind: 'chunks' | 'bm25' | 'links') => new FileBlob(segmentPath(this.dir, name, kind));
    return new FormatSegment(
      name,
      { chunks: file('chunks'), bm25: file('bm25'), links: file('links') },
      { file: segmentPath(this.dir, name, 'chunks') },
    );
  }
}

export class DirectoryPersistence implements Persistence {
  readonly source: DirectorySource;
  readonly inFiles = true;
  private readonly documents = new DocumentsWriter();
  readonly schema = SCHEMA_VERSION;
  private readonly access: AccessLog;

  readonly dir: string;
  private readonly opts: DirectoryOptions;

  constructor(dir: string, opts: DirectoryOptions = {}) {
    this.dir = dir;
    this.opts = opts;
    this.source = new DirectorySource(dir);
    this.access = new AccessLog(dir);
  }

  get manifestPath(): string {
    return path.join(this.dir, MANIFEST_FILE);
  }

  async readManifest(): Promise<Manifest> {
    return checkManifest(await readJson(this.manifestPath), this.manifestPath);
  }

  /**
   * The committed state. Readers take no lock, so a writer in another process may commit and delete the
   * generation files named by the manifest just read: a missing file under a manifest that has since
   * moved on is read again from the newer manifest, and only one missing under an unchanged manifest
   * is corruption.
   */
  async readState(): Promise<CommittedState> {
    for (let attempt = 1; ; attempt++) {
      const m = await this.readManifest();
      try {
        return await this.readGeneration(m);
      } catch (err) {
        if (attempt >= 20 || !isRlmError(err, 'STORE_CORRUPT')) throw err;
        if ((await this.readManifest()).generation === m.generation) throw err;
      }
    }
  }

  private async readGeneration(m: Manifest): Promise<CommittedState> {
    const linksFile = path.join(this.dir, m.links);
    const { documents, sizes } = await readDocuments(this.dir, m);
    const links = checkLinks(await readJsonOrCorrupt(linksFile), linksFile);
    this.documents.committed(documents, m, sizes);
    // Before schema 3 every segment is in the JSON format; since, the manifest lists those left.
    const legacy = m.schema < BINARY_SCHEMA ? m.segments : (m.legacy ?? []);
    for (const name of legacy) this.source.legacy.add(name);
    return {
      generation: m.generation,
      nextSegment: m.nextSegment,
      segments: m.segments,
      documents,
      manual: links.links,
      embedder: m.embedder,
      schema: m.schema,
      ...(legacy.length > 0 ? { legacy } : {}),
      ...(m.related !== undefined && m.schema >= BINARY_SCHEMA ? { related: m.related } : {}),
      ...(m.memory ? { memory: m.memory } : {}),
    };
  }

  async generation(): Promise<number> {
    // Synchronous: a small file read on every write (remember), where a thread-pool hop costs more.
    return checkManifest(
      parseJson(readFileSync(this.manifestPath, 'utf8'), this.manifestPath),
      this.manifestPath,
    ).generation;
  }

  readJournal(name: string, from: number): Promise<{ lines: string[]; end: number; missing?: true }> {
    return readJournalFile(path.join(this.dir, name), from);
  }

  appendJournal(name: string, at: number, line: string): Promise<number> {
    return appendJournalLine(path.join(this.dir, name), at, line);
  }

  lock(command: string, signal?: AbortSignal): Promise<StoreLock> {
    return acquireLock(this.dir, {
      waitMs: this.opts.lockWaitMs ?? 10_000,
      command,
      ...(this.opts.onLockWait ? { onWait: this.opts.onLockWait } : {}),
      ...(signal ? { signal } : {}),
    });
  }

  async writeSegment(name: string, files: SegmentFiles): Promise<void> {
    await fs.mkdir(path.join(this.dir, SEGMENTS_DIR), { recursive: true });
    // The chunk file last: a segment whose source of truth exists is complete.
    await writeFileAtomic(segmentPath(this.dir, name, 'bm25'), files.bm25);
    await writeFileAtomic(segmentPath(this.dir, name, 'links'), files.links);
    await writeFileAtomic(segmentPath(this.dir, name, 'chunks'), files.chunks);
  }

  async commit(state: CommittedState): Promise<void> {
    const docs = await this.documents.write(this.dir, state.generation, state.documents);
    const links = generationFile('links', state.generation);
    await writeFileAtomic(path.join(this.dir, links), jsonPieces({ version: 1, links: state.manual }));
    let createdAt = new Date().toISOString();
    try {
      createdAt = (await this.readManifest()).createdAt;
    } catch {
      // first commit, or repairing a broken manifest
    }
    const live = new Set(state.segments);
    const legacy = (state.legacy ?? []).filter((s) => live.has(s));
    const manifest: Manifest = {
      format: STORE_FORMAT,
      schema: SCHEMA_VERSION,
      generation: state.generation,
      createdAt,
      updatedAt: new Date().toISOString(),
      tokenizer: TOKENIZER,
      nextSegment: state.nextSegment,
      segments: state.segments,
      ...docs.files,
      links,
      embedder: state.embedder,
      ...(state.memory ? { memory: state.memory } : {}),
      ...(state.related !== undefined ? { related: state.related } : {}),
      ...(legacy.length > 0 ? { legacy } : {}),
    };
    for (const name of legacy) this.source.legacy.add(name);
    await writeFileAtomic(this.manifestPath, JSON.stringify(manifest, null, 2));
    docs.done();
    await this.access.compact();
    await this.removeUnreferenced(manifest);
  }

  /** Deletes files no manifest names: older generations, dropped segments, leftovers of a crash. */
  async removeUnreferenced(manifest: Manifest): Promise<void> {
    const keep = new Set([
      MANIFEST_FILE,
      manifest.documents,
      ...(manifest.documentLog ?? []),
      manifest.links,
      ACCESS_FILE,
      ACCESS_LOG,
      LOCK_FILE,
      SEGMENTS_DIR,
      VECTORS_DIR,
      ...(manifest.memory ? [manifest.memory.journal] : []),
    ]);
    for (const name of await fs.readdir(this.dir)) {
      if (keep.has(name)) continue;
      if (isGenerationFile(name) || isTempName(name) || isLeftoverLockFile(name)) {
        await fs.rm(path.join(this.dir, name), { force: true });
      }
    }
    const live = new Set(manifest.segments);
    const segDir = path.join(this.dir, SEGMENTS_DIR);
    if (!(await exists(segDir))) return;
    for (const name of await fs.readdir(segDir)) {
      const seg = /^(seg-\d+)\./.exec(name)?.[1];
      // Recursive: a dead segment's name may be a folder (damage repair has just written around).
      if ((seg && !live.has(seg)) || isTempName(name))
        await fs.rm(path.join(segDir, name), { force: true, recursive: true });
    }
  }

  touch(ids: string[], at?: number): void {
    this.access.touch(ids, at);
  }

  accessStats(id: string) {
    return this.access.stats(id);
  }
  accessRaw(id: string): [number, number] {
    return this.access.raw(id);
  }
  forgetAccess(documents: ReadonlySet<string>): void {
    this.access.drop(documents);
  }

  async flush(): Promise<void> {
    this.access.flushSync();
  }
}

async function readJsonOrCorrupt(file: string): Promise<unknown> {
  try {
    return await readJson(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw corrupt(file, 'file is missing');
    throw err;
  }
}
