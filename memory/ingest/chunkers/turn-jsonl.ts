/**
 * JSONL transcripts for the `turn` chunker: Claude Code session files and generic `{role, content}`
 * lines. Each user→assistant exchange is rendered as readable text ("User: …\n\nAssistant: …"), with
 * tool calls and results reduced to short markers; the draft's start/end bound the source lines.
 */

import type { ChunkDraft } from '../../types.ts';
import { countTokens } from '../tokens.ts';
import { type ChunkerSettings, isBlank, packRange } from './common.ts';

type Role = 'user' | 'assistant' | 'system';

/** One source line's contribution to the rendered exchange. */
interface Segment {
  /** Offset in the rendered text where this line's part begins. */
  at: number;
  srcStart: number;
  srcEnd: number;
}

interface Exchange {
  parts: string[];
  length: number;
  segments: Segment[];
  lastRole: Role | null;
  time?: string;
  session?: string;
  branch?: string;
}

/** A parsed chat line, whatever its flavour. */
export interface ChatMessage {
  role: Role;
  /** True when the line only carries tool results: it continues the assistant's turn. */
  toolResultsOnly: boolean;
  text: string;
  time?: string;
  session?: string;
  branch?: string;
  /** The assistant's model (Claude Code `message.model`). */
  model?: string;
}

const USER_ROLES = new Set(['user', 'human']);
const ASSISTANT_ROLES = new Set(['assistant', 'ai', 'model', 'bot', 'gpt', 'chatbot']);
const OTHER_ROLES = new Set(['system', 'tool', 'function', 'developer']);
/** Claude Code line types that carry no conversation. */
const NOISE_TYPES = new Set(['progress', 'queue-operation', 'file-history-snapshot', 'system', 'summary']);

const LABEL: Record<Role, string> = { user: 'User', assistant: 'Assistant', system: 'System' };

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The role of a generic or Claude Code line, or null when the line is not a chat message. */
function roleOf(obj: Json): Role | null {
  const message = isObject(obj.message) ? obj.message : undefined;
  const type = str(obj.type);
  if ((type === 'user' || type === 'assistant') && message) return type;
  if (type !== undefined && NOISE_TYPES.has(type)) return null;
  const role = (str(obj.role) ?? str(message?.role))?.toLowerCase();
  if (role === undefined) return null;
  if (USER_ROLES.has(role)) return 'user';
  if (ASSISTANT_ROLES.has(role)) return 'assistant';
  if (OTHER_ROLES.has(role)) return 'system';
  return null;
}

/** True when a parsed JSONL line is a chat message this chunker understands. */
export function isChatLine(obj: unknown): boolean {
  return isObject(obj) && roleOf(obj) !== null;
}

/** Short marker for a tool call, with the most telling input when there is one. */
function toolMarker(block: Json): string {
  const name = str(block.name) ?? (isObject(block.function) ? str(block.function.name) : undefined) ?? 'tool';
  const input = isObject(block.input) ? block.input : {};
  const hint = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description']
    .map((k) => str(input[k]))
    .find((v) => v !== undefined);
  const short = hint ? ` ${hint.replace(/\s+/g, ' ').slice(0, 80)}` : '';
  return `[tool: ${name}${short}]`;
}

/** Renders message content (a string or an array of blocks) as text. */
function renderContent(content: unknown): { text: string; toolResultsOnly: boolean } {
  if (typeof content === 'string') return { text: content, toolResultsOnly: false };
  if (!Array.isArray(content)) return { text: '', toolResultsOnly: false };
  const parts: string[] = [];
  let results = 0;
  let others = 0;
  for (const block of content) {
    if (typeof block === 'string') {
      parts.push(block);
      others++;
      continue;
    }
    if (!isObject(block)) continue;
    switch (block.type) {
      case 'text':
      case 'input_text':
      case 'output_text':
        if (typeof block.text === 'string') parts.push(block.text);
        others++;
        break;
      case 'tool_use':
        parts.push(toolMarker(block));
        others++;
        break;
      case 'tool_result':
        parts.push(block.is_error === true ? '[tool error]' : '[tool result]');
        results++;
        break;
      case 'image':
      case 'image_url':
        parts.push('[image]');
        others++;
        break;
      case 'document':
        parts.push('[document]');
        others++;
        break;
      default:
        // thinking blocks and unknown kinds carry nothing worth retrieving
        break;
    }
  }
  return { text: parts.join('\n'), toolResultsOnly: results > 0 && others === 0 };
}

/** A JSONL line's chat message (rendered text, role, time...), or null when it is not one (noise, meta). */
export function parseChatLine(obj: Json): ChatMessage | null {
  const role = roleOf(obj);
  if (role === null || obj.isMeta === true) return null;
  const message = isObject(obj.message) ? obj.message : undefined;
  const content = obj.content ?? message?.content ?? obj.text;
  const rendered = renderContent(content);
  const calls = Array.isArray(obj.tool_calls) ? obj.tool_calls.filter(isObject).map(toolMarker) : [];
  const text = [rendered.text, ...calls].filter((t) => t !== '').join('\n');
  const msg: ChatMessage = { role, toolResultsOnly: rendered.toolResultsOnly, text };
  const time = str(obj.timestamp) ?? str(obj.time) ?? str(obj.created_at);
  const session = str(obj.sessionId) ?? str(obj.session_id);
  const branch = str(obj.gitBranch);
  if (time !== undefined) msg.time = time;
  if (session !== undefined) msg.session = session;
  if (branch !== undefined) msg.branch = branch;
  const model = str(message?.model);
  if (model !== undefined && model !== '<synthetic>') msg.model = model;
  return msg;
}

/**
 * Turn chunks of a JSONL transcript, or null when no line is a chat message (the caller falls back to
 * another chunker). Invalid JSON lines are skipped and reported through `opts.onNote`.
 */
export function jsonlTurnChunks(
  text: string,
  opts: Pick<ChunkerSettings, 'chunkTokens' | 'onNote'>,
): ChunkDraft[] | null {
  const out: ChunkDraft[] = [];
  let invalid = 0;
  let firstInvalid = 0;
  let lineNo = 0;
  let title: string | undefined;
  let session: string | undefined;
  let chat = 0;
  let current: Exchange | null = null;
  let turn = 0;

  const finish = () => {
    if (current === null) return;
    const ex = current;
    current = null;
    const rendered = ex.parts.join('');
    if (isBlank(rendered, 0, rendered.length)) return;
    turn++;
    const tags = ['role:exchange'];
    const sid = ex.session ?? session;
    if (sid) tags.push(`session:${sid}`);
    if (ex.branch) tags.push(`branch:${ex.branch}`);
    const section = `${title ? `${title} > ` : ''}turn ${turn}`;
    const emit = (a: number, b: number, tokens: number) => {
      if (isBlank(rendered, a, b)) return;
      const d: ChunkDraft = {
        text: rendered.slice(a, b),
        start: segmentAt(ex.segments, a).srcStart,
        end: segmentAt(ex.segments, b - 1).srcEnd,
        tokens,
        section,
        tags,
      };
      if (ex.time !== undefined) d.time = ex.time;
      out.push(d);
    };
    const tokens = countTokens(rendered);
    if (tokens <= opts.chunkTokens) emit(0, rendered.length, tokens);
    else
      packRange(
        rendered,
        0,
        rendered.length,
        { maxTokens: opts.chunkTokens, overlapTokens: 0, searchFrom: 0.9 },
        emit,
      );
  };

  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    const start = pos;
    const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    pos = nl + 1;
    lineNo++;
    if (isBlank(text, start, end)) continue;
    let obj: unknown;
    try {
      obj = JSON.parse(text.slice(start, end));
    } catch {
      if (invalid++ === 0) firstInvalid = lineNo;
      continue;
    }
    if (!isObject(obj)) continue;
    if (obj.type === 'summary' && title === undefined) title = str(obj.summary);
    const msg = parseChatLine(obj);
    if (msg === null) continue;
    chat++;
    session ??= msg.session;
    const role: Role = msg.toolResultsOnly ? 'assistant' : msg.role;
    if (msg.role === 'user' && !msg.toolResultsOnly) finish();
    current ??= { parts: [], length: 0, segments: [], lastRole: null };
    const ex: Exchange = current;
    if (msg.time !== undefined) ex.time ??= msg.time;
    if (msg.session !== undefined) ex.session ??= msg.session;
    if (msg.branch !== undefined) ex.branch ??= msg.branch;
    if (msg.text === '') continue;
    const head = role === ex.lastRole ? '\n' : `${ex.length > 0 ? '\n\n' : ''}${LABEL[role]}: `;
    const part = head + msg.text;
    ex.segments.push({ at: ex.length, srcStart: start, srcEnd: end });
    ex.parts.push(part);
    ex.length += part.length;
    ex.lastRole = role;
  }
  finish();
  if (invalid > 0) {
    opts.onNote(
      `skipped ${invalid} invalid JSON line${invalid === 1 ? '' : 's'} (first at line ${firstInvalid})`,
    );
  }
  return chat > 0 ? out : null;
}

/** The segment holding rendered offset `at` (segments are sorted by `at`). */
function segmentAt(segments: Segment[], at: number): Segment {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (segments[mid]!.at <= at) lo = mid;
    else hi = mid - 1;
  }
  return segments[lo]!;
}
