/**
 * Host paths stay on the host. Text the host composes for model code (a host call's error, a sub-call's
 * "Error: ..." string) passes through {@link withoutHostPaths} on its way into the sandbox: the model
 * learns what failed, not where the user keeps their files, rules or traces.
 */

/**
 * Paths: absolute with at least two segments (POSIX `/a/b`, Windows `C:\a\b`, UNC `\\host\share`),
 * or starting with `~/`, `./` or `../`. An absolute path starts where no word, dot or separator comes
 * before it, or after `file://` or a JSON escape (`\n/home/…` in quoted text): `read/write/exec` stays
 * words, and the `\n\n--` of escaped text is no Windows path. Glued to a word, three segments or more
 * are taken for a path all the same (`x/home/alice/secret`). A single absolute segment (`/x`) is left
 * alone, as it is more often a fraction or a ratio.
 */
const HOST_PATH = new RegExp(
  [
    String.raw`(?:(?<![\w.\\/])|(?<=file:\/\/)|(?<=\\[nrt]))(?:[A-Za-z]:[\\/]|\\\\|\/)[\w.@+~-]+(?:[\\/][\w.@+~-]+)+[\\/]?`,
    String.raw`(?<=\w)(?:\/[\w.@+~-]+){3,}\/?`,
    String.raw`(?<![\w.])(?:~|\.\.?)(?:[\\/][\w.@+~-]+)+[\\/]?`,
  ].join('|'),
  'g',
);

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
