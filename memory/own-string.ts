/**
 * A copy of a short string that does not keep a longer one alive. V8 makes `text.slice(a, b)` of 13
 * units or more a view into `text`: a memo that keeps such a slice (a token, a piece) keeps the whole
 * document it came from, and an ingest's memos then held dozens of megabytes of texts long written.
 */
export function ownString(s: string): string {
  // Slicing a concatenation flattens it into a string of its own first; the result views that.
  return s.length < 13 ? s : ` ${s}`.slice(1);
}
