/**
 * `rlm trace html`: one self-contained HTML page per trace file. The runs' trees travel as JSON inside the
 * page and a small inline script renders them; nothing is fetched, so the page works offline and from
 * any folder. Model text never becomes markup: the JSON is escaped for its <script> element and the
 * script only ever sets `textContent`.
 */

import type { SpanNode, Trajectory } from './result.ts';
import type { TraceEvent } from './trace.ts';
import { VIEWER_CSS } from './trace-html-style.ts';
import { VIEWER_JS } from './trace-html-viewer.ts';
import { buildTrajectories, runTimes } from './trajectory.ts';

/**
 * Request texts longer than this are cut in the page (a leaf's request holds its whole context, and a
 * run can make hundreds); code, outputs, replies, prompts and answers are always whole.
 */
const HTML_REQUEST_CHARS = 20_000;

function cut(text: string): string {
  if (text.length <= HTML_REQUEST_CHARS) return text;
  const more = text.length - HTML_REQUEST_CHARS;
  return `${text.slice(0, HTML_REQUEST_CHARS)}\n… [${more.toLocaleString('en-US')} more characters in the trace file]`;
}

/**
 * The trees as the page gets them: each distinct system prompt once in `texts` (a hundred sub-calls
 * share one), spans pointing at it by index, long request texts cut.
 */
function pageData(trajectories: Trajectory[]): { runs: unknown[]; texts: string[] } {
  const texts: string[] = [];
  const index = new Map<string, number>();
  const textId = (t: string): number => {
    let i = index.get(t);
    if (i === undefined) {
      i = texts.push(cut(t)) - 1;
      index.set(t, i);
    }
    return i;
  };
  const span = (s: SpanNode): unknown => {
    const { system, turns, ...rest } = s;
    return {
      ...rest,
      ...(system === undefined ? {} : { system: textId(system) }),
      turns: turns.map((t) => ({
        ...t,
        ...(t.request === undefined
          ? {}
          : {
              request: {
                from: t.request.from,
                messages: t.request.messages.map((m) => ({ role: m.role, content: cut(m.content) })),
              },
            }),
        blocks: t.blocks.map((b) => ({ ...b, subcalls: b.subcalls.map(span) })),
      })),
    };
  };
  const runs = trajectories.map((t) => ({
    ...t,
    root: span(t.root),
    times: runTimes(t.result?.elapsedMs, t.root.endMs ?? 0),
  }));
  return { runs, texts };
}

/** JSON that is safe inside a <script> element: no `<` can close it or open a comment. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The page for every run in `events` (one run: just it; several: a picker). */
export function renderTraceHtml(events: TraceEvent[]): string {
  const trajectories = buildTrajectories(events);
  const first = trajectories[0];
  const title = first === undefined ? 'rlm trace' : `rlm trace: ${first.question.slice(0, 80)}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${VIEWER_CSS}</style>
</head>
<body>
<header id="top"></header>
<main id="app"><noscript>This page needs JavaScript to show the trace.</noscript></main>
<script type="application/json" id="rlm-data">${scriptJson(pageData(trajectories))}</script>
<script>${VIEWER_JS}</script>
</body>
</html>
`;
}

/** Escapes text for HTML element content and attribute values. */
function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}
