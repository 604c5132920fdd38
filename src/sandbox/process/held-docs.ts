/**
 * The context documents an isolate process holds, for the sessions it serves one after another (see
 * child.ts). They arrive in blocks (protocol.ts `docs`): the texts of a block back to back, which the
 * process decodes once and keeps as one isolated-vm ExternalCopy, outside its heap; a session's isolate
 * gets each block as one external string and each document as a slice of it, so nothing is copied per
 * document (a folder of 400 files costs one decode and one copy, not 400 of each).
 *
 * A block whose bytes the host could not read whole (a file changed as it read it: `docsRead` false) is
 * dropped, and an `open` naming one of its documents fails.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import ivm from 'isolated-vm';
import { DocReader } from './doc-pipe.ts';
import type { ToChild } from './protocol.ts';

/** One received block: its copy, and the documents of it that are still held. */
interface Block {
  copy: ivm.ExternalCopy<string>;
  held: number;
}

/** Where a document is: its block and its range there, in UTF-16 units. */
interface Place {
  block: string;
  start: number;
  end: number;
}

/** What a block waits for before it is complete: its bytes, and the host's word for a `fromFile` one. */
interface Arriving {
  done: Promise<void>;
  waits: number;
  arrived: () => void;
  docs: { id: string; chars: number }[];
}

/** What an isolate gets: each block once, and for each document the block and range it is. */
export interface Documents {
  blocks: ivm.Copy<string>[];
  layout: [number, number, number][];
}

/**
 * Characters from which a block's received bytes and decoded text are collected at once. Otherwise the
 * bytes, the text and the copy would all be held at the peak, three times the block.
 */
const COLLECT_FROM_CHARS = 8 << 20;
const collect = processGc();

/**
 * V8's `gc` for this process's own use, taken from a context made while the flag is on and turned off
 * again at once: with --expose-gc for the whole process, V8 would put a `gc` no one can delete on every
 * isolate's global, and `gc({execution: 'async'})` lets the model's code run after its block has ended,
 * outside any time limit. Undefined where V8 refuses.
 */
function processGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

export class HeldDocuments {
  readonly #blocks = new Map<string, Block>();
  readonly #places = new Map<string, Place>();
  readonly #arriving = new Map<string, Arriving>();
  /** Blocks whose bytes were not their texts. */
  readonly #failed = new Set<string>();
  /** Where each announced document's block is, until it is held (or dropped). */
  readonly #pending = new Map<string, string>();
  readonly reader = new DocReader((block, text) => this.#received(block, text));

  /** A block follows on the pipe (a `docs` message). */
  announce(m: Extract<ToChild, { t: 'docs' }>): void {
    let arrived = (): void => {};
    const done = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    this.#arriving.set(m.block, { done, waits: m.fromFile === true ? 2 : 1, arrived, docs: m.docs });
    for (const d of m.docs) this.#pending.set(d.id, m.block);
    this.reader.expect(m.block, m.bytes, m.encoding);
  }

  /** The host's word on a `fromFile` block (a `docsRead` message). */
  judged(block: string, ok: boolean): void {
    if (!ok) {
      this.#failed.add(block);
      this.#dropBlock(block);
    }
    this.#arrivedPart(block);
  }

  /**
   * The documents `ids` for an isolate, once they have all arrived; every other document is let go.
   * @throws Error when one of them did not arrive whole.
   */
  async take(ids: readonly string[]): Promise<Documents> {
    await Promise.all(ids.map((id) => this.#arriving.get(this.#pending.get(id) ?? '')?.done));
    const wanted = new Set(ids);
    for (const id of [...this.#places.keys()]) if (!wanted.has(id)) this.#release(id);
    const order = new Map<string, number>();
    const out: Documents = { blocks: [], layout: [] };
    for (const id of ids) {
      const place = this.#places.get(id);
      if (place === undefined) {
        const block = this.#pending.get(id);
        if (block !== undefined && this.#failed.has(block))
          throw new Error('a context file changed on disk after the run read it; run again');
        throw new Error(`context document ${id} was not sent`);
      }
      let index = order.get(place.block);
      if (index === undefined) {
        index = out.blocks.length;
        order.set(place.block, index);
        out.blocks.push(this.#blocks.get(place.block)!.copy.copyInto());
      }
      out.layout.push([index, place.start, place.end]);
    }
    return out;
  }

  #received(block: string, text: string): void {
    if (text.length < COLLECT_FROM_CHARS || collect === undefined) {
      this.#keep(block, text);
      return;
    }
    // Out of the read's call stack, the received bytes are garbage: collected before the copy is made,
    // and the decoded text after.
    setImmediate(() => {
      collect();
      this.#keep(block, text);
      setImmediate(collect);
    });
  }

  #keep(block: string, text: string): void {
    const entry = this.#arriving.get(block);
    if (entry !== undefined && !this.#failed.has(block)) {
      const chars = entry.docs.reduce((n, d) => n + d.chars, 0);
      if (chars !== text.length) this.#failed.add(block);
      else {
        // The copy is outside this process's heap: the isolate's strings are external strings over it,
        // and the decoded text here becomes garbage at once.
        this.#blocks.set(block, { copy: new ivm.ExternalCopy(text), held: entry.docs.length });
        let at = 0;
        for (const d of entry.docs) {
          this.#release(d.id);
          this.#places.set(d.id, { block, start: at, end: at + d.chars });
          at += d.chars;
        }
      }
    }
    this.#arrivedPart(block);
  }

  #arrivedPart(block: string): void {
    const entry = this.#arriving.get(block);
    if (entry === undefined || --entry.waits > 0) return;
    this.#arriving.delete(block);
    for (const d of entry.docs)
      if (this.#pending.get(d.id) === block && this.#places.has(d.id)) this.#pending.delete(d.id);
    entry.arrived();
  }

  /** Lets a document go; its block goes with the last of its documents. */
  #release(id: string): void {
    const place = this.#places.get(id);
    if (place === undefined) return;
    this.#places.delete(id);
    const block = this.#blocks.get(place.block);
    if (block !== undefined && --block.held === 0) {
      block.copy.release();
      this.#blocks.delete(place.block);
    }
  }

  #dropBlock(block: string): void {
    for (const [id, place] of [...this.#places]) if (place.block === block) this.#release(id);
  }
}
