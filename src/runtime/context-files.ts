/**
 * Reading a run's `--context` files and folders: the scan a store's ingest does (memory/ingest/files.ts:
 * ignore rules, symlinks), then each file measured (memory/ingest/file-text.ts: binary detection, UTF-8
 * validation, its length), and nothing more. The host keeps none of the text: a session's isolate
 * process gets it read from the file again (a `TextSource`), and chunking and indexing wait until model
 * code asks for them (lazy-index.ts).
 */
import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  type FileText,
  headOf,
  MeasureBuffers,
  measureFile,
  readText,
  textKey,
  textOf,
} from '../../memory/ingest/file-text.ts';
import { contentHash, documentIdFor, type ScanResult, scanPaths } from '../../memory/ingest/files.ts';
import type { TextSource } from '../sandbox/host.ts';
import { DEFAULT_MAX_CONTEXT_CHARS as MAX_STRING_CHARS } from '../sandbox/limits.ts';

/** One document of the context: a whole file, or a part of a file too big to be one string. */
export interface ContextFile {
  /** The id its store document gets (memory/ingest/files.ts `documentIdFor`; parts `ID.p2`, ...). */
  id: string;
  /** Absolute path of the file. */
  path: string;
  /** What the text is and where it comes from. */
  text: FileText;
  /** The same, as the sandbox reads it. */
  source: TextSource;
}

/**
 * What reading gave: the documents in path order, the beginning of the first one's text, the files left
 * out with why, what the scan passed over.
 */
export interface ReadFiles {
  files: ContextFile[];
  head: string;
  notes: { path: string; note: string }[];
  passedOver: ScanResult['passedOver'];
}

/** Files measured between two turns of the event loop (a small file is measured in microseconds). */
const FILES_PER_YIELD = 16;
/** Characters of the first text the prompt's sample looks at (src/runtime/text-sample.ts reads 256 Ki). */
const HEAD_CHARS = 256 * 1024;

/** sha256 of a text's UTF-8, read from its file (the bytes as they are, for the usual UTF-8 file). */
async function hashOf(t: FileText): Promise<string> {
  if (t.encoding !== 'utf8') return contentHash(await textOf(t));
  const hash = createHash('sha256');
  for await (const piece of readText(t)) hash.update(piece);
  return hash.digest('hex');
}

/** The sandbox's view of a measured text: read again from its file each time it is needed. */
function sourceOf(t: FileText): TextSource {
  let hash: Promise<string> | undefined;
  return {
    key: textKey(t),
    chars: t.chars,
    encoding: t.encoding,
    bytes: t.bytes,
    read: (scratch) => readText(t, scratch),
    string: () => textOf(t),
    hash: () => {
      hash ??= hashOf(t);
      return hash;
    },
  };
}

/**
 * Reads `paths` (files and folders) in the order a store ingest takes them: measures each file, keeps
 * the beginning of the first text (the prompt's sample) and no other text.
 */
export async function readContextFiles(paths: string[], signal?: AbortSignal): Promise<ReadFiles> {
  const scan = await scanPaths(paths, signal === undefined ? {} : { signal });
  const notes: ReadFiles['notes'] = [...scan.notes];
  const files: ContextFile[] = [];
  const buffers = new MeasureBuffers();
  for (const [i, { path }] of scan.files.entries()) {
    if (i % FILES_PER_YIELD === FILES_PER_YIELD - 1) await yieldToLoop();
    signal?.throwIfAborted();
    const measured = await measureFile(path, MAX_STRING_CHARS, buffers);
    if ('skipped' in measured) {
      notes.push({ path, note: measured.note });
      continue;
    }
    const id = documentIdFor(path);
    // A file too long for one string is parts, with the ids a store ingest gives them (memory/SCHEMA.md).
    for (const [k, text] of measured.texts.entries())
      files.push({ id: k === 0 ? id : `${id}.p${k + 1}`, path, text, source: sourceOf(text) });
  }
  const first = files[0];
  const head = first === undefined ? '' : await headOf(first.text, HEAD_CHARS).catch(() => '');
  return { files, head, notes, passedOver: scan.passedOver };
}

/** Groups of two or more files with the same `key`. */
async function sameBy(
  files: readonly ContextFile[],
  key: (f: ContextFile) => Promise<string>,
): Promise<ContextFile[][]> {
  const groups = new Map<string, ContextFile[]>();
  for (const f of files) {
    const k = await key(f).catch(() => `unread:${f.id}`);
    const same = groups.get(k);
    if (same === undefined) groups.set(k, [f]);
    else same.push(f);
  }
  return [...groups.values()].filter((g) => g.length > 1);
}

/**
 * How many documents have the same text as an earlier one. Only texts of the same size and the same first
 * bytes can be, and only those are hashed whole (read again from their files): most folders read nothing.
 */
export async function countDuplicateFiles(files: readonly ContextFile[]): Promise<number> {
  let duplicates = 0;
  const like = async (f: ContextFile) => `${f.text.encoding}:${f.text.bytes}:${f.text.chars}:${f.text.first}`;
  for (const alike of await sameBy(files, like))
    for (const same of await sameBy(alike, (f) => f.source.hash())) duplicates += same.length - 1;
  return duplicates;
}
