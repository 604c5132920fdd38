/**
 * Access statistics, kept apart from chunk data so that reads never rewrite chunk files. Reads append
 * small batched lines to `access.log`; a writer folds the log into `access.json` under the write lock.
 */
import {
  appendFileSync,
  closeSync,
  promises as fs,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../fsutil.ts';
import type { AccessStats } from '../types.ts';

export const ACCESS_FILE = 'access.json';
export const ACCESS_LOG = 'access.log';
const FLUSH_AT = 500;

type Table = Record<string, [count: number, lastMs: number]>;

/** How long a loaded table is trusted before the log is checked again for other processes' lines. */
const RECHECK_MS = 200;

export class AccessLog {
  private pending: { t: number; ids: string[] }[] = [];
  private pendingCount = 0;
  /** The pending touches by id, so a lookup does not scan them. */
  private pendingStats = new Map<string, [count: number, lastMs: number]>();
  private timer: NodeJS.Timeout | undefined;
  private table: Table | undefined;
  /** Bytes of the log folded into `table`, the log's inode, and when it was last checked. */
  private logSeen = 0;
  private logIno = -1;
  private checkedAt = 0;
  /** Documents deleted since the last compaction: their rows leave access.json when it is next written. */
  private readonly dropped = new Set<string>();

  private readonly dir: string | null;

  constructor(dir: string | null) {
    this.dir = dir;
  }

  touch(ids: string[], at: number = Date.now()): void {
    if (ids.length === 0) return;
    if (this.dir === null) {
      // Nothing to append to: the table is the whole truth.
      const table = this.load();
      for (const id of ids) bump(table, id, at);
      return;
    }
    this.pending.push({ t: at, ids });
    this.pendingCount += ids.length;
    for (const id of ids) {
      const row = this.pendingStats.get(id) ?? [0, 0];
      row[0]++;
      row[1] = Math.max(row[1], at);
      this.pendingStats.set(id, row);
    }
    if (this.pendingCount >= FLUSH_AT) this.flushSync();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flushSync(), 2000);
      this.timer.unref();
    }
  }

  /** Appends pending touches to the log. Failures are swallowed: access stats are best effort. */
  flushSync(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dir === null || this.pending.length === 0) return;
    const lines = `${this.pending.map((p) => JSON.stringify(p)).join('\n')}\n`;
    const logFile = path.join(this.dir, ACCESS_LOG);
    try {
      appendFileSync(logFile, lines);
    } catch {
      return; // read-only store or full disk: keep the stats in memory only
    }
    // When nobody else wrote since our last look, our lines are folded here instead of read back.
    try {
      const st = statSync(logFile);
      const bytes = Buffer.byteLength(lines);
      if (this.table && st.ino === this.logIno && st.size === this.logSeen + bytes) {
        for (const p of this.pending) for (const id of p.ids) bump(this.table, id, p.t);
        this.logSeen = st.size;
      } else this.checkedAt = 0;
    } catch {
      this.checkedAt = 0;
    }
    this.pending = [];
    this.pendingCount = 0;
    this.pendingStats.clear();
  }

  stats(id: string): AccessStats {
    const [count, last] = this.raw(id);
    return { count, last: last > 0 ? new Date(last).toISOString() : null };
  }

  /** Count and last access in epoch ms (0: never), without building strings: for weights in hot loops. */
  raw(id: string): [count: number, lastMs: number] {
    const row = this.load()[id];
    let count = row ? row[0] : 0;
    let last = row ? row[1] : 0;
    const p = this.pendingStats.get(id);
    if (p) {
      count += p[0];
      last = Math.max(last, p[1]);
    }
    return [count, last];
  }

  private load(): Table {
    if (this.dir === null) {
      this.table ??= {};
      return this.table;
    }
    const now = Date.now();
    if (this.table && now - this.checkedAt < RECHECK_MS) return this.table;
    this.checkedAt = now;
    const logFile = path.join(this.dir, ACCESS_LOG);
    let size = 0;
    let ino = -1;
    try {
      const st = statSync(logFile);
      size = st.size;
      ino = st.ino;
    } catch {
      size = 0;
    }
    if (this.table && ino === this.logIno && size === this.logSeen) return this.table;
    const sameLog = ino === this.logIno || (this.logIno === -1 && this.logSeen === 0);
    if (this.table && sameLog && size > this.logSeen) {
      // Only the lines appended since the last look (other processes' reads).
      this.logSeen += fold(this.table, readTail(logFile, this.logSeen, size));
      this.logIno = ino;
      return this.table;
    }
    const table: Table = {};
    try {
      Object.assign(table, JSON.parse(readFileSync(path.join(this.dir, ACCESS_FILE), 'utf8')) as Table);
    } catch {
      // missing or unreadable: start from the log alone
    }
    this.logSeen = size > 0 ? fold(table, readFileSync(logFile, 'utf8')) : 0;
    this.table = table;
    this.logIno = ino;
    return table;
  }

  /**
   * Forgets the access stats of every chunk of `documents` (deleted for good: no trace of them stays, and
   * a document later added under the same id starts afresh). The rows go from memory now and from the
   * files at the next {@link compact}.
   */
  drop(documents: ReadonlySet<string>): void {
    if (documents.size === 0) return;
    for (const d of documents) this.dropped.add(d);
    const gone = (id: string) => documents.has(id.slice(0, id.lastIndexOf(':')));
    for (const id of [...this.pendingStats.keys()]) if (gone(id)) this.pendingStats.delete(id);
    for (const p of this.pending) p.ids = p.ids.filter((id) => !gone(id));
    if (this.table) for (const id of Object.keys(this.table)) if (gone(id)) delete this.table[id];
  }

  /** Folds the log into access.json, leaving out dropped documents. Call only under the write lock. */
  async compact(): Promise<void> {
    if (this.dir === null) return;
    this.flushSync();
    const logFile = path.join(this.dir, ACCESS_LOG);
    // Renaming first means readers appending meanwhile start a new log instead of losing lines.
    const folding = `${logFile}.${process.pid}`;
    let log = true;
    try {
      await fs.rename(logFile, folding);
    } catch {
      log = false; // no log
    }
    if (!log && this.dropped.size === 0) return;
    const table: Table = {};
    try {
      Object.assign(table, JSON.parse(await fs.readFile(path.join(this.dir, ACCESS_FILE), 'utf8')) as Table);
    } catch {
      // start fresh
    }
    if (log) fold(table, await fs.readFile(folding, 'utf8'));
    if (this.dropped.size > 0) {
      for (const id of Object.keys(table))
        if (this.dropped.has(id.slice(0, id.lastIndexOf(':')))) delete table[id];
      this.dropped.clear();
    }
    await writeFileAtomic(path.join(this.dir, ACCESS_FILE), JSON.stringify(table));
    await fs.rm(folding, { force: true });
    // The folded table is access.json now; a log started meanwhile is read from its start.
    this.table = table;
    this.logSeen = 0;
    this.logIno = -1;
    this.checkedAt = 0;
  }
}

/** Folds complete lines of `log` into `table`; returns the UTF-8 bytes consumed (up to the last newline). */
function fold(table: Table, log: string): number {
  const end = log.lastIndexOf('\n') + 1;
  for (const line of log.slice(0, end).split('\n')) {
    if (!line) continue;
    try {
      const { t, ids } = JSON.parse(line) as { t: number; ids: string[] };
      for (const id of ids) bump(table, id, t);
    } catch {
      // a torn line from a killed reader: ignore it
    }
  }
  return Buffer.byteLength(log.slice(0, end));
}

function bump(table: Table, id: string, t: number): void {
  const row = table[id] ?? [0, 0];
  row[0]++;
  row[1] = Math.max(row[1], t);
  table[id] = row;
}

function readTail(file: string, from: number, to: number): string {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(to - from);
    readSync(fd, buf, 0, buf.length, from);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}
