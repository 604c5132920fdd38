/**
 * The memory journal: memories remembered since the last fold, one JSON line each, appended under the
 * write lock and fsynced. Appending a line is the commit of a `remember`, so it stays O(1) however big
 * the store is; a fold later moves the lines into an ordinary segment (see memory/engine/memories.ts).
 * The calls are synchronous on purpose: each is one small syscall, and handing it to the thread pool
 * costs more than the call itself on a busy machine (remember latency is the sum of a few of them).
 */
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import { syncDir } from '../fsutil.ts';

/**
 * Complete lines from byte `from` on; a torn last line (killed writer) is left for the next append to cut.
 * A missing file reads as empty with `missing` set: the caller tells a journal not written yet from one a
 * fold removed since it read the manifest (memory/engine/base-store.ts `syncJournal`).
 */
export async function readJournalFile(
  file: string,
  from: number,
): Promise<{ lines: string[]; end: number; missing?: true }> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], end: 0, missing: true };
    throw err;
  }
  try {
    const { size } = fstatSync(fd);
    if (size <= from) return { lines: [], end: Math.min(from, size) };
    const buf = Buffer.alloc(size - from);
    readSync(fd, buf, 0, buf.length, from);
    const last = buf.lastIndexOf(0x0a);
    if (last < 0) return { lines: [], end: from };
    const lines = buf
      .toString('utf8', 0, last)
      .split('\n')
      .filter((l) => l.length > 0);
    return { lines, end: from + last + 1 };
  } finally {
    closeSync(fd);
  }
}

/** Appends `line` at byte `at` (cutting anything after it: a torn line nobody acknowledged) and fsyncs. */
export async function appendJournalLine(file: string, at: number, line: string): Promise<number> {
  let created = false;
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fd = openSync(file, 'w');
    created = true;
  }
  let end: number;
  try {
    const { size } = fstatSync(fd);
    const pos = Math.min(at, size);
    if (size !== pos) ftruncateSync(fd, pos);
    const data = Buffer.from(`${line}\n`, 'utf8');
    writeSync(fd, data, 0, data.length, pos);
    fdatasyncSync(fd);
    end = pos + data.length;
  } finally {
    closeSync(fd);
  }
  if (created) await syncDir(path.dirname(file));
  return end;
}
