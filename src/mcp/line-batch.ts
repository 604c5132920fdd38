/**
 * Hands the SDK's stdio reader whole lines only. The reader appends every chunk it gets to one buffer
 * (`Buffer.concat`) and searches it for a newline from the start, so a message arriving in n pipe-sized
 * chunks costs O(n²): a 49 MiB inline context took 42 s to read. Collecting the chunks here and passing
 * them on once a line is complete makes reading linear.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** A pass-through that only emits up to the last newline seen, holding the rest back. */
export class LineBatcher extends Transform {
  readonly #flushAbove: number;
  #held: Buffer[] = [];
  #heldBytes = 0;

  /**
   * @param flushAbove bytes held without a newline after which they are passed on anyway, so that the
   *   reader's own size limit still applies to an endless line.
   */
  constructor(flushAbove: number) {
    super();
    this.#flushAbove = flushAbove;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const nl = chunk.lastIndexOf(0x0a);
    if (nl < 0) {
      this.#hold(chunk);
      if (this.#heldBytes > this.#flushAbove) this.#release();
      done();
      return;
    }
    this.#hold(chunk.subarray(0, nl + 1));
    this.#release();
    if (nl + 1 < chunk.length) this.#hold(chunk.subarray(nl + 1));
    done();
  }

  override _flush(done: TransformCallback): void {
    this.#release();
    done();
  }

  #hold(part: Buffer): void {
    this.#held.push(part);
    this.#heldBytes += part.length;
  }

  #release(): void {
    if (this.#heldBytes === 0) return;
    const out = this.#held.length === 1 ? this.#held[0]! : Buffer.concat(this.#held, this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
    this.push(out);
  }
}
