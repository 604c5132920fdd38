/**
 * Host paths stay on the host. Text the host composes for model code (a host call's error, a sub-call's
 * "Error: ..." string) passes through {@link withoutHostPaths} on its way into the sandbox: the model
 * learns what failed, not where the user keeps their files, rules or traces.
 */

/**
 * Paths: absolute with at least two segments (POSIX `/a/b`, Windows `C:\a\b`, UNC `\\host\share`),
 * or starting with `~/`, `./` or `../`. An absolute path starts where no word, dot or separator comes
 * before it: `read/write/exec` is words, and the `\n\n--` of escaped text is no Windows path. A single
 * absolute segment (`/x`) is left alone, as it is more often a fraction or a ratio.
 */
const HOST_PATH =
  /(?<![\w.\\/])(?:[A-Za-z]:[\\/]|\\\\|\/)[\w.@+~-]+(?:[\\/][\w.@+~-]+)+[\\/]?|(?<![\w.])(?:~|\.\.?)(?:[\\/][\w.@+~-]+)+[\\/]?/g;

/**
 * `text` with the `known` host strings replaced by what model code may see (longest first: a model
 * spec before the path inside it), then any other path replaced by `<path>`.
 */
export function withoutHostPaths(text: string, known: ReadonlyArray<readonly [string, string]> = []): string {
  let out = text;
  const pairs = [...known].filter(([from]) => from !== '').sort((a, b) => b[0].length - a[0].length);
  for (const [from, to] of pairs) out = out.split(from).join(to);
  return out.replace(HOST_PATH, '<path>');
}
