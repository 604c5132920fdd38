/**
 * Text from data (file names, chunk text, model output) made safe to show on a terminal. A terminal acts
 * on control characters: an escape sequence can set the window title, clear the screen, move the cursor
 * over earlier output or write the clipboard (OSC 52), a carriage return or a line break in a file name
 * fakes a line, and bidirectional overrides reorder what is displayed. Shown escaped, they are visible
 * and inert; JSON output and pipes keep the exact text (the CLI decides, see `shown` in src/cli/io.ts).
 */

/** C0 controls but tab and line feed, DEL, C1 controls, and the bidirectional marks and overrides. */
const CONTROLS = /[\0-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, plus tab and line feed: for a value that must stay on its line (a file name, a preview). */
const INLINE_CONTROLS = /[\0-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\x1b': '\\x1b' };

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character written as an escape (`\x1b`, `\r`, `\x07`, `\u202e`...). Line
 * feeds and tabs are kept unless `inline`, where they are escaped too so the value stays on one line.
 */
export function escapeControls(text: string, inline = false): string {
  return text.replace(inline ? INLINE_CONTROLS : CONTROLS, escapeOne);
}
