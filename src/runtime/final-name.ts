/**
 * `FINAL(name)` in reply text where `name` is no variable of the session: a literal answer
 * (`FINAL(entity)` after counting labels, `FINAL(C)` for option C), or a mistyped variable
 * (`FINAL(answr)`), which must not end the run with the answer "answr". A word the run has already put
 * before the model (in the question, the context's first lines, an output, or the model's own prose) is
 * taken as meant; any other is sent back to the model as a likely typo, with the nearest variable it
 * declared.
 */

/** Escapes a name for use in a RegExp. */
function escaped(name: string): string {
  return name.replace(/[$]/g, '\\$&');
}

/** True when `word` occurs as a whole word (not inside a longer identifier) in one of `texts`. */
export function seenWord(word: string, texts: readonly string[]): boolean {
  const re = new RegExp(`(?:^|[^\\w$])${escaped(word)}(?![\\w$])`);
  return texts.some((t) => re.test(t));
}

/** Names a block of code declares (`const`, `let`, `var`, `function`, `class`; not destructuring). */
export function declaredNames(code: string): string[] {
  return [...code.matchAll(/\b(?:const|let|var|function\*?|class)\s+([A-Za-z_$][\w$]*)/g)].map(
    (m) => m[1] as string,
  );
}

/** Levenshtein distance, stopping early once it exceeds `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      row.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length] ?? max + 1;
}

/** The name nearest to `word` (two edits at most, one for short words), or undefined. */
export function nearestName(word: string, names: Iterable<string>): string | undefined {
  const max = word.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const name of names) {
    if (name === word) continue;
    const d = distance(word.toLowerCase(), name.toLowerCase(), max);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}
