/**
 * Access statistics, kept apart from chunk data so that reads never rewrite chunk files. Reads append
 * small batched lines to `access.log`; a writer folds the log into `access.json` under the write lock.
 */
import { appendFileSync, promises as fs, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './fsutil.ts';
import type { AccessStats } from './types.ts';

export const ACCESS_FILE = 'access.json';
export const ACCESS_LOG = 'access.log';
const FLUSH_AT = 500;

type Table = Record<string, [count: number, lastMs: number]>;

export class AccessLog {
  private pending: { t: number; ids: string[] }[] = [];
  private pendingCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private table: Table | undefined;
  private logSeen = 0;

  private readonly dir: string | null;

  constructor(dir: string | null) {
    this.dir = dir;
  }

  touch(ids: string[], at: number = Date.now()): void {
    if (ids.length === 0) return;
    this.pending.push({ t: at, ids });
    this.pendingCount += ids.length;
    if (this.dir === null) return;
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
    const lines = this.pending.map((p) => JSON.stringify(p)).join('\n');
    try {
      appendFileSync(path.join(this.dir, ACCESS_LOG), `${lines}\n`);
      this.pending = [];
      this.pendingCount = 0;
    } catch {
      // read-only store or full disk: keep the stats in memory only
    }
  }

  stats(id: string): AccessStats {
    const table = this.load();
    let [count, last] = table[id] ?? [0, 0];
    for (const p of this.pending) {
      for (const x of p.ids) {
        if (x === id) {
          count++;
          last = Math.max(last, p.t);
        }
      }
    }
    return { count, last: last > 0 ? new Date(last).toISOString() : null };
  }

  private load(): Table {
    if (this.dir === null) {
      this.table ??= {};
      return this.table;
    }
    const logFile = path.join(this.dir, ACCESS_LOG);
    let size = 0;
    try {
      size = statSync(logFile).size;
    } catch {
      size = 0;
    }
    if (this.table && size === this.logSeen) return this.table;
    const table: Table = {};
    try {
      Object.assign(table, JSON.parse(readFileSync(path.join(this.dir, ACCESS_FILE), 'utf8')) as Table);
    } catch {
      // missing or unreadable: start from the log alone
    }
    if (size > 0) fold(table, readFileSync(logFile, 'utf8'));
    this.table = table;
    this.logSeen = size;
    return table;
  }

  /** Folds the log into access.json. Call only under the write lock. */
  async compact(): Promise<void> {
    if (this.dir === null) return;
    this.flushSync();
    const logFile = path.join(this.dir, ACCESS_LOG);
    // Renaming first means readers appending meanwhile start a new log instead of losing lines.
    const folding = `${logFile}.${process.pid}`;
    try {
      await fs.rename(logFile, folding);
    } catch {
      return; // no log
    }
    const table: Table = {};
    try {
      Object.assign(table, JSON.parse(await fs.readFile(path.join(this.dir, ACCESS_FILE), 'utf8')) as Table);
    } catch {
      // start fresh
    }
    fold(table, await fs.readFile(folding, 'utf8'));
    await writeFileAtomic(path.join(this.dir, ACCESS_FILE), JSON.stringify(table));
    await fs.rm(folding, { force: true });
    this.table = undefined;
  }
}

function fold(table: Table, log: string): void {
  for (const line of log.split('\n')) {
    if (!line) continue;
    try {
      const { t, ids } = JSON.parse(line) as { t: number; ids: string[] };
      for (const id of ids) {
        const row = table[id] ?? [0, 0];
        row[0]++;
        row[1] = Math.max(row[1], t);
        table[id] = row;
      }
    } catch {
      // a torn last line from a killed reader: ignore it
    }
  }
}
