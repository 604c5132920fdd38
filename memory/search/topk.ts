/**
 * The k best-scoring entries of a stream, kept in a binary min-heap so a search costs O(n log k)
 * instead of sorting every match. Ties go to the smaller `order`, which keeps rankings stable.
 */
export class TopK<T = string> {
  private readonly scores: Float64Array;
  private readonly orders: Float64Array;
  private readonly ids: T[] = [];
  private size = 0;
  readonly k: number;

  constructor(k: number) {
    this.k = k;
    this.scores = new Float64Array(k);
    this.orders = new Float64Array(k);
  }

  /** True when `a` ranks below `b`: lower score, or the same score and a later order. */
  private worse(i: number, j: number): boolean {
    const a = this.scores[i]!;
    const b = this.scores[j]!;
    return a < b || (a === b && this.orders[i]! > this.orders[j]!);
  }

  /** Whether an entry with this score and order would enter the heap (check before costly filters). */
  accepts(score: number, order: number): boolean {
    if (this.size < this.k) return this.k > 0;
    const root = this.scores[0]!;
    return score > root || (score === root && order < this.orders[0]!);
  }

  /** Adds an entry; call only after {@link accepts} returned true. */
  push(score: number, order: number, id: T): void {
    if (this.size < this.k) {
      let i = this.size++;
      this.set(i, score, order, id);
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    this.set(0, score, order, id);
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.size && this.worse(l, m)) m = l;
      if (r < this.size && this.worse(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }

  /** The entries, best first. */
  sorted(): { id: T; score: number }[] {
    const idx = Array.from({ length: this.size }, (_, i) => i);
    idx.sort((a, b) => this.scores[b]! - this.scores[a]! || this.orders[a]! - this.orders[b]!);
    return idx.map((i) => ({ id: this.ids[i]!, score: this.scores[i]! }));
  }

  private set(i: number, score: number, order: number, id: T): void {
    this.scores[i] = score;
    this.orders[i] = order;
    this.ids[i] = id;
  }

  private swap(i: number, j: number): void {
    const s = this.scores[i]!;
    const o = this.orders[i]!;
    const id = this.ids[i]!;
    this.set(i, this.scores[j]!, this.orders[j]!, this.ids[j]!);
    this.set(j, s, o, id);
  }
}
