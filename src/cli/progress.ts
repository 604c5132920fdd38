import { escapeControls } from '../../core/terminal-text.ts';

/**
 * A one-line progress bar on stderr, drawn only on a terminal and at most ~10 times a second. Its label
 * names files, so its control characters are escaped (it is only ever drawn on a terminal).
 */
export class ProgressBar {
  private last = 0;
  private drawn = false;

  private readonly out: { write(s: string): unknown; isTTY?: boolean; columns?: number };

  constructor(out: { write(s: string): unknown; isTTY?: boolean; columns?: number }) {
    this.out = out;
  }

  get enabled(): boolean {
    return this.out.isTTY === true;
  }

  update(done: number, total: number, label: string, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    const width = 24;
    const ratio = total > 0 ? Math.min(1, done / total) : 0;
    const fill = Math.round(ratio * width);
    const bar = `[${'#'.repeat(fill)}${' '.repeat(width - fill)}] ${String(Math.round(ratio * 100)).padStart(3)}%`;
    const cols = this.out.columns ?? 100;
    const line = `${bar} ${escapeControls(label, true)}`.slice(0, Math.max(20, cols - 1));
    this.out.write(`\r\x1b[2K${line}`);
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) this.out.write('\r\x1b[2K');
    this.drawn = false;
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
