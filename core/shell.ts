/** Writing commands that a POSIX shell runs later: hook commands, suggested flags in messages. */

/** `s` as one shell word that reads back unchanged: as is when it is plain, single-quoted otherwise. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}
