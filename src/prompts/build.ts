/**
 * Builders that turn the prompt data (root.ts, sub.ts, leaf.ts) and the measured context shape into the
 * system prompt of one call. Pure functions: the same inputs always give the same text.
 */
import { LEAF_PROMPT } from './leaf.ts';
import {
  API_LINES,
  CODE_SECTION,
  FINISH_SECTION,
  RLM_KIND,
  ROOT_EXAMPLE,
  ROOT_INTRO,
  ROOT_STRATEGY,
} from './root.ts';
import {
  type ContextShape,
  estimateTokens,
  type LeftOut,
  type PromptLimits,
  type TextSample,
} from './shape.ts';
import { SUB_INTRO, SUB_STRATEGY } from './sub.ts';

/** Which system prompt to build: the root RLM or a sub-RLM (0 < depth < maxDepth). */
export type PromptRole = 'root' | 'sub';

/**
 * A whole number with thousands commas (what `toLocaleString('en-US')` gives, without loading ICU's
 * number formatting, which cost tens of milliseconds on the way to the first request).
 */
const fmt = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * Replaces `{{name}}` placeholders (double braces, since the API lines are full of `{...}` object shapes);
 * an unknown name is a programming error, so it throws.
 */
export function fill(template: string, vars: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_m, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`prompt placeholder {{${name}}} has no value`);
    return typeof v === 'number' ? fmt(v) : v;
  });
}

/** One or two sentences stating the context's size and shape. */
export function describeContext(shape: ContextShape): string {
  const tokens = `(~${fmt(shape.tokens)} tokens)`;
  const size = `${fmt(shape.chars)} characters ${tokens}`;
  let text: string;
  switch (shape.kind) {
    case 'none':
      return 'There is no context for this request: `context` is an empty string.';
    case 'string':
      text = `The context is one text of ${size}.`;
      break;
    case 'documents': {
      text = `The context is ${fmt(shape.documents)} documents, ${fmt(shape.chars)} characters in total ${tokens}.`;
      const lens = shape.documentChars ?? [];
      // A document list names the documents with their lengths already.
      if (lens.length > 0 && (shape.documentList?.length ?? 0) === 0) {
        const more = shape.documents > lens.length ? ', ...' : '';
        text += ` Document lengths: ${lens.map(fmt).join(', ')}${more}.`;
      }
      break;
    }
    case 'store':
      text =
        `The context is a chunk store of ${fmt(shape.documents)} document${shape.documents === 1 ? '' : 's'} ` +
        `in ${fmt(shape.chunks)} chunks, ${size}.`;
      break;
  }
  if (!shape.inIsolate) {
    const limit = shape.isolateLimit === undefined ? '' : ` (${fmt(shape.isolateLimit)} characters)`;
    const readers = searchable(shape)
      ? 'peek(start, end), grep and search_chunks'
      : 'peek(start, end) and grep';
    text +=
      shape.kind === 'store'
        ? ' Read it through the functions below.'
        : ` It is longer than the sandbox can hold${limit}, so \`context\` is not loaded: read it with ${readers}.`;
  }
  if ((shape.duplicates ?? 0) > 0) {
    const n = shape.duplicates ?? 0;
    text += ` ${fmt(n)} document${n === 1 ? ' has' : 's have'} the same text as an earlier one (\`duplicateOf\` in list_documents()).`;
  }
  return text + leftOut(shape.leftOut) + documentList(shape) + sampleText(shape);
}

/** What reading the paths did not take in, so the model knows the context is not the whole folder. */
function leftOut(out: LeftOut | undefined): string {
  const what = out === undefined ? '' : describeLeftOut(out);
  return what === '' ? '' : ` Left out of the context: ${what}.`;
}

/** What reading the paths left out, as a list (the prompt says it to the model, `rlm answer` to the user). */
export function describeLeftOut(out: LeftOut): string {
  const parts: string[] = [];
  const files = (n: number, what: string, examples: string[]) =>
    `${fmt(n)} ${what} file${n === 1 ? '' : 's'}${examples.length > 0 ? ` (${examples.join(', ')}${n > examples.length ? ', ...' : ''})` : ''}`;
  if (out.binary > 0) parts.push(files(out.binary, 'binary', out.binaryExamples));
  if (out.unreadable > 0) parts.push(files(out.unreadable, 'unreadable', out.unreadableExamples));
  if (out.hidden > 0) parts.push(`${fmt(out.hidden)} hidden path${out.hidden === 1 ? '' : 's'}`);
  if (out.ignored > 0) parts.push(`${fmt(out.ignored)} ignored (.gitignore, node_modules)`);
  if (out.excluded > 0) parts.push(`${fmt(out.excluded)} excluded`);
  return parts.join(', ');
}

/** A fence line inside sampled text would close the prompt's own fence early. */
const FENCE = /^(\s*)(`{3,}|~{3,})/;

/** The text's first lines and the line starts that recur: the records' shape, which chunk edges do not follow. */
function sampleText(shape: ContextShape): string {
  const s: TextSample | undefined = shape.sample;
  if (s === undefined || s.lines.length === 0) return '';
  const whose = shape.documents > 1 ? 'The first document begins' : 'It begins';
  const lines = [`${whose}:`, '````', ...s.lines.map((l) => l.replace(FENCE, '$1$2 ')), '````'];
  const facts: string[] = [];
  if (s.blankRuns > 0) facts.push(`${fmt(s.blankRuns)} blank-line breaks`);
  for (const st of s.starts) facts.push(`${fmt(st.lines)} lines starting \`${st.start}\``);
  if (facts.length > 0) {
    const where = s.window < shape.chars ? `In its first ${fmt(s.window)} characters` : 'In all';
    lines.push(`${where}: ${facts.join(', ')}.`);
  }
  return `\n${lines.join('\n')}`;
}

/** The first documents by path, size and chunks; the rest are counted and left to list_documents(). */
function documentList(shape: ContextShape): string {
  const list = shape.documentList ?? [];
  if (list.length === 0 || shape.documents < 2) return '';
  const rows = list.map(
    (d) => `- ${d.path} (${fmt(d.chars)} chars${d.chunks === undefined ? '' : `, ${fmt(d.chunks)} chunks`})`,
  );
  const rest = shape.documents - list.length;
  const more = rest > 0 ? `\n- ... and ${fmt(rest)} more: list_documents() returns them all.` : '';
  return `\nDocuments:\n${rows.join('\n')}${more}`;
}

function contextVar(shape: ContextShape): string {
  if (shape.kind === 'none') return 'an empty string.';
  if (!shape.inIsolate) {
    return shape.kind === 'store'
      ? 'not loaded; use the functions below.'
      : 'not loaded (too large); use the functions below.';
  }
  return shape.documents > 1 || shape.kind === 'documents'
    ? 'the documents, as an array of strings (in list_documents() order).'
    : 'the whole context, as one string.';
}

/** What grep searches, and how its ids and offsets relate to the reads, by how the text is held. */
function grepVars(shape: ContextShape): Record<'scope' | 'grepUnit' | 'acrossChunks' | 'narrowBy', string> {
  const narrowBy = '; `document` (an id or path, or a list) narrows the search';
  if (shape.chunks > 0) {
    return {
      scope: 'every chunk of every document (it misses nothing)',
      grepUnit:
        '`id` is the chunk the match starts in, `offset` its position there and `documentOffset` its position in ' +
        '`document`, the whole file even where the chunk id names a later part of a big one (`DOC.p2:N`): ' +
        '`peek(document, documentOffset - 500, documentOffset + 500)` reads around it.',
      acrossChunks: ', across chunk edges',
      narrowBy,
    };
  }
  if (shape.searchable === true) {
    // --context files before their index: grep reads each file whole, by its store document id.
    return {
      scope:
        shape.documents > 1 ? 'every document (it misses nothing)' : 'the whole text (it misses nothing)',
      grepUnit:
        "`id` (= `document`) is the file's document id (list_documents() shows them) and `offset` (= " +
        '`documentOffset`) the position in it: `peek(id, offset - 500, offset + 500)` reads around it.',
      acrossChunks: '',
      narrowBy,
    };
  }
  if (shape.kind === 'documents') {
    return {
      scope: 'every document (it misses nothing)',
      grepUnit:
        '`id` (= `document`) is the document `doc:N` and `offset` (= `documentOffset`) the position in it: ' +
        '`peek(id, offset - 500, offset + 500)` reads around it.',
      acrossChunks: '',
      narrowBy,
    };
  }
  return {
    scope: 'the whole text (it misses nothing)',
    grepUnit: '`id` is `doc:0` and `offset` (= `documentOffset`) the position in `context`.',
    acrossChunks: '',
    narrowBy: '',
  };
}

/** Whether search_chunks and the chunk functions work: a store, or files indexed on first use. */
function searchable(shape: ContextShape): boolean {
  return shape.chunks > 0 || shape.searchable === true;
}

/** Characters of one llm_query piece: the limit, less room for the question wrapped around it. */
function pieceChars(limits: PromptLimits): number {
  return Math.max(1000, Math.floor((limits.maxSubCallChars * 0.8) / 1000) * 1000);
}

function apiSection(shape: ContextShape, limits: PromptLimits): string {
  const hasStore = searchable(shape);
  const callee = limits.depth + 1;
  const lines: string[] = ['## Functions', API_LINES.context, API_LINES.print];
  if (shape.kind !== 'none') {
    if (shape.kind === 'store' || shape.documents > 1) lines.push(API_LINES.documents);
    // A store run has `context` only when it is loaded in the isolate; without it peek(start, end) throws.
    if (shape.kind !== 'store' || shape.inIsolate) lines.push(API_LINES.peek);
    if (hasStore || shape.kind === 'documents') lines.push(API_LINES.peekDocument);
    lines.push(API_LINES.grep, API_LINES.count);
    if (hasStore) lines.push(API_LINES.search, API_LINES.chunks);
  }
  if (callee > limits.maxDepth) lines.push(API_LINES.noLlm);
  else {
    lines.push(API_LINES.llmQuery, API_LINES.rlmQuery, API_LINES.batched, API_LINES.schema);
    if ((limits.models?.length ?? 0) > 1) lines.push(API_LINES.models);
  }
  lines.push(API_LINES.final);
  const models = limits.models ?? [];
  const vars = {
    contextVar: contextVar(shape),
    peekJoin: shape.documents > 1 ? ' (the documents joined by a newline)' : '',
    // --context files: listing them builds no index, so chunks are not counted until something needs them.
    chunksNote:
      shape.searchable === true && shape.chunks === 0
        ? '; `chunks` is null until search_chunks (or get_chunk, neighbors) builds the chunk index'
        : '',
    ...grepVars(shape),
    rlmKind: fill(callee < limits.maxDepth ? RLM_KIND.rlm : RLM_KIND.leaf, {
      subChars: limits.maxSubCallChars,
    }),
    subChars: limits.maxSubCallChars,
    subTokens: estimateTokens(limits.maxSubCallChars),
    piece: pieceChars(limits),
    concurrency: limits.subCallConcurrency,
    models: models.join(', '),
    defaultModel: models[0] ?? '',
  };
  return fill(lines.join('\n'), vars);
}

function example(shape: ContextShape, limits: PromptLimits): string | null {
  if (limits.depth + 1 > limits.maxDepth || shape.kind === 'none') return null;
  if (!shape.inIsolate) return searchable(shape) ? ROOT_EXAMPLE.store : null;
  const textExpr = shape.kind === 'documents' || shape.documents > 1 ? "context.join('\\n\\n')" : 'context';
  return fill(ROOT_EXAMPLE.text, { textExpr });
}

function rootStrategy(shape: ContextShape, limits: PromptLimits): string {
  const hasLlm = limits.depth + 1 <= limits.maxDepth;
  const exact = searchable(shape)
    ? ', grep (it scans everything; `{count: true}` counts) and peek; search_chunks only shows where to look'
    : ' and grep (`{count: true}` counts)';
  // Over a store without loaded text there is no `context` to print: explore it through the functions.
  const first = shape.kind === 'store' && !shape.inIsolate ? 'store' : 'text';
  const steps = ROOT_STRATEGY.filter(
    (s) => (hasLlm || s.needsLlm !== true) && (s.only === undefined || s.only === first),
  ).map((s, i) => `${i + 1}. ${s.text}`);
  return fill(['## How to work', ...steps].join('\n'), { exact, piece: pieceChars(limits) });
}

/** Builds the system prompt of a root or sub-RLM run over a context of the given shape. */
export function buildSystemPrompt(role: PromptRole, shape: ContextShape, limits: PromptLimits): string {
  const parts: (string | null)[] = [
    role === 'root' ? ROOT_INTRO : SUB_INTRO,
    `## The context\n${describeContext(shape)}`,
    fill(CODE_SECTION, { outputChars: limits.maxOutputCharsPerBlock }),
    apiSection(shape, limits),
    role === 'root' ? rootStrategy(shape, limits) : SUB_STRATEGY,
    role === 'root' ? example(shape, limits) : null,
    fill(FINISH_SECTION, { maxIterations: limits.maxIterations, answerChars: limits.maxAnswerChars }),
  ];
  return parts.filter((p): p is string => p !== null).join('\n\n');
}

/** The system prompt of a plain (leaf) completion. */
export function buildLeafPrompt(): string {
  return LEAF_PROMPT;
}
