/**
 * Drives a real headless Chromium over the DevTools protocol on a pipe (no port, no network), for tests
 * of pages we generate. Debian's `chromium` package is what CI installs (.ci/run); `chromiumPath()` is
 * undefined when no browser is on this machine.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

/** The browser binary, or undefined when none is installed. */
export function chromiumPath(): string | undefined {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() !== '') return r.stdout.trim();
  }
  return undefined;
}

interface Pending {
  resolve: (v: Record<string, unknown>) => void;
  reject: (e: Error) => void;
}

/** One page in a fresh browser. */
export class BrowserPage {
  readonly #proc: ChildProcess;
  readonly #profile: string;
  readonly #out: Writable;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners: ((method: string, params: Record<string, unknown>, session?: string) => void)[] = [];
  #nextId = 0;
  #session = '';

  private constructor(proc: ChildProcess, profile: string) {
    this.#proc = proc;
    this.#profile = profile;
    this.#out = proc.stdio[3] as Writable;
    // Writing to a browser that has gone fails its request (below), not the test process.
    this.#out.on('error', () => {});
    // A browser that exits (or crashes) answers nothing more: fail what waits for it.
    proc.once('exit', (code, signal) => {
      for (const p of this.#pending.values()) p.reject(new Error(`chromium exited (${code ?? signal})`));
      this.#pending.clear();
    });
    let buf = '';
    (proc.stdio[4] as Readable).on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let end = buf.indexOf('\0');
      while (end !== -1) {
        this.#onMessage(JSON.parse(buf.slice(0, end)));
        buf = buf.slice(end + 1);
        end = buf.indexOf('\0');
      }
    });
  }

  /** Starts the browser with one blank page of the given size. */
  static async launch(binary: string, width = 1280, height = 800): Promise<BrowserPage> {
    const profile = mkdtempSync(join(tmpdir(), 'rlm-chromium-'));
    const proc = spawn(
      binary,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
        `--user-data-dir=${profile}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
    );
    const page = new BrowserPage(proc, profile);
    try {
      const { targetId } = (await page.send('Target.createTarget', { url: 'about:blank' })) as {
        targetId: string;
      };
      const { sessionId } = (await page.send('Target.attachToTarget', { targetId, flatten: true })) as {
        sessionId: string;
      };
      page.#session = sessionId;
      await page.send('Page.enable', {}, sessionId);
      await page.send(
        'Emulation.setDeviceMetricsOverride',
        { width, height, deviceScaleFactor: 1, mobile: false },
        sessionId,
      );
    } catch (err) {
      // A browser that could not start leaves neither its process nor its profile behind.
      await page.close();
      throw err;
    }
    return page;
  }

  #onMessage(msg: {
    id?: number;
    result?: Record<string, unknown>;
    error?: { message: string };
    method?: string;
    params?: Record<string, unknown>;
    sessionId?: string;
  }): void {
    if (msg.id !== undefined) {
      const p = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(msg.error.message));
      else p?.resolve(msg.result ?? {});
    } else if (msg.method !== undefined) {
      for (const l of this.#listeners) l(msg.method, msg.params ?? {}, msg.sessionId);
    }
  }

  /** One DevTools command (on the page's session unless another is given). */
  send(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ): Promise<Record<string, unknown>> {
    const id = ++this.#nextId;
    const session = sessionId ?? (this.#session || undefined);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#out.write(
        `${JSON.stringify({ id, method, params, ...(session ? { sessionId: session } : {}) })}\0`,
      );
    });
  }

  /** Opens a local file and waits for its load event. */
  async open(file: string): Promise<void> {
    const loaded = new Promise<void>((resolve) => {
      this.#listeners.push((method) => {
        if (method === 'Page.loadEventFired') resolve();
      });
    });
    await this.send('Page.navigate', { url: pathToFileURL(file).href });
    await loaded;
  }

  /** Evaluates `expression` in the page (awaiting a promise) and returns its JSON value. */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    })) as {
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) {
      throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
    }
    return r.result.value as T;
  }

  /**
   * Waits until `expression` is truthy in the page (polled in the page every 10 ms), and returns its value:
   * for effects the page applies later (toggle events, debounced input), instead of a fixed wait.
   */
  async waitFor<T>(expression: string): Promise<T> {
    return this.evaluate<T>(
      `new Promise((resolve) => { const check = () => { const v = (${expression}); if (v) resolve(v); else setTimeout(check, 10); }; check(); })`,
    );
  }

  /** A PNG of the viewport. */
  async screenshot(): Promise<Buffer> {
    const r = (await this.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
    return Buffer.from(r.data, 'base64');
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.#proc.exitCode !== null) resolve();
      else this.#proc.once('exit', () => resolve());
    });
    this.send('Browser.close', {}, '').catch(() => {});
    const timer = setTimeout(() => this.#proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    rmSync(this.#profile, { recursive: true, force: true });
  }
}
