/**
 * The memory journal: memories remembered since the last fold, one JSON line each, appended under the
 * write lock and fsynced. Appending a line is the commit of a `remember`, so it stays O(1) however big
 * the store is; a fold later moves the lines into an ordinary segment (see memory/memories.ts).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { syncDir } from './fsutil.ts';

/** Complete lines from byte `from` on; a torn last line (killed writer) is left for the next append to cut. */
export async function readJournalFile(file: string, from: number): Promise<{ lines: string[]; end: number }> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], end: 0 };
    throw err;
  }
  try {
    const { size } = await handle.stat();
    if (size <= from) return { lines: [], end: Math.min(from, size) };
    const buf = Buffer.alloc(size - from);
    await handle.read(buf, 0, buf.length, from);
    const last = buf.lastIndexOf(0x0a);
    if (last < 0) return { lines: [], end: from };
    const lines = buf
      .toString('utf8', 0, last)
      .split('\n')
      .filter((l) => l.length > 0);
    return { lines, end: from + last + 1 };
  } finally {
    await handle.close();
  }
}

/** Appends `line` at byte `at` (cutting anything after it: a torn line nobody acknowledged) and fsyncs. */
export async function appendJournalLine(file: string, at: number, line: string): Promise<number> {
  let created = false;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    handle = await fs.open(file, 'w');
    created = true;
  }
  try {
    const { size } = await handle.stat();
    at = Math.min(at, size);
    if (size !== at) await handle.truncate(at);
    const data = Buffer.from(`${line}\n`, 'utf8');
    await handle.write(data, 0, data.length, at);
    await handle.datasync();
    if (created) await syncDir(path.dirname(file));
    return at + data.length;
  } finally {
    await handle.close();
  }
}
