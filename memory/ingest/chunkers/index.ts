/**
 * Entry point of the chunkers: pick one for a file ({@link chunkerFor}) and turn a document's text into
 * drafts ({@link chunkText}).
 *
 * Invariants, for every chunker: drafts come in document order; `tokens === countTokens(text)`; and
 * `text === document.slice(start, end)`, except `turn` on JSONL, where `text` is the rendered exchange
 * and `start`/`end` bound the source lines it came from.
 */

import { extname } from 'node:path';
import { RlmError } from '../../../core/errors.ts';
import type { ChunkDraft, ChunkerName } from '../../types.ts';
import { countTokens } from '../tokens.ts';
import type { ChunkerSettings, ChunkOptions } from './common.ts';
import { lineChunks } from './lines.ts';
import { markdownChunks } from './markdown.ts';
import { paragraphChunks } from './paragraph.ts';
import { sizeChunks } from './size.ts';
import { looksLikeChatJsonl, looksLikeTranscript, turnChunks } from './turn.ts';

export type { ChunkOptions } from './common.ts';

/** Every chunker name, for validating user input. */
export const CHUNKERS: readonly ChunkerName[] = ['size', 'paragraph', 'lines', 'turn', 'markdown'];

const DEFAULT_CHUNK_TOKENS = 2000;
const DEFAULT_OVERLAP_TOKENS = 200;
const DEFAULT_MIN_TOKENS = 100;
const DEFAULT_MAX_TOKENS = 800;

const MARKDOWN_EXTENSIONS = new Set(['md', 'markdown', 'mdx', 'mdown', 'mkd']);

/** Source code and other line-oriented formats. */
export const CODE_EXTENSIONS: ReadonlySet<string> = new Set(
  (
    'ts tsx mts cts js jsx mjs cjs py pyi go rs java c cc cpp cxx h hh hpp hxx rb php cs swift kt kts scala ' +
    'sh bash zsh fish ps1 sql lua pl pm r jl dart ex exs erl hrl hs ml mli fs fsx clj cljs elm vue svelte ' +
    'm mm groovy gradle zig nim v sol proto graphql tf hcl vim el lisp scm asm s css scss less'
  ).split(' '),
);

/** Line-oriented data and config formats. */
const LINE_EXTENSIONS = new Set(
  'json jsonc json5 csv tsv log ndjson yaml yml toml ini cfg conf env xml html htm svg diff patch'.split(' '),
);

/** File names without a telling extension that are code or config. */
const CODE_FILE_NAMES = new Set(['makefile', 'dockerfile', 'rakefile', 'gemfile', 'justfile', 'procfile']);

/** Chooses a chunker from the file type, looking at the text when the extension is ambiguous. */
export function chunkerFor(file: string, text?: string): ChunkerName {
  // A gzipped file is chunked as what it holds: notes.md.gz as Markdown.
  const path = file.replace(/\.gz$/i, '');
  const ext = extname(path).slice(1).toLowerCase();
  if (MARKDOWN_EXTENSIONS.has(ext)) return 'markdown';
  if (ext === 'jsonl') return text !== undefined && looksLikeChatJsonl(text) ? 'turn' : 'lines';
  if (CODE_EXTENSIONS.has(ext) || LINE_EXTENSIONS.has(ext)) return 'lines';
  const base = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1).toLowerCase();
  if (CODE_FILE_NAMES.has(base)) return 'lines';
  if (text !== undefined && looksLikeTranscript(text)) return 'turn';
  return 'paragraph';
}

/** Turns a document's text into chunk drafts with the given chunker. */
export function chunkText(text: string, chunker: ChunkerName, opts: ChunkOptions = {}): ChunkDraft[] {
  const o = resolveOptions(opts);
  if (text.length === 0) return [];
  switch (chunker) {
    case 'size':
      return sizeChunks(text, o);
    case 'paragraph':
      return paragraphChunks(text, o);
    case 'lines':
      return lineChunks(text, o);
    case 'turn':
      return turnChunks(text, o);
    case 'markdown':
      return markdownChunks(text, o);
    case 'memory':
      // A remembered text stays whole: recall returns what was said, not a slice of it.
      return [{ text, start: 0, end: text.length, tokens: countTokens(text) }];
    default:
      throw new RlmError('VALIDATION', `unknown chunker: ${String(chunker)}`, { chunker });
  }
}

function resolveOptions(opts: ChunkOptions): ChunkerSettings {
  const chunkTokens = positiveInt('chunkTokens', opts.chunkTokens, DEFAULT_CHUNK_TOKENS);
  const overlapTokens = opts.overlapTokens ?? Math.min(DEFAULT_OVERLAP_TOKENS, Math.floor(chunkTokens / 10));
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= chunkTokens) {
    throw new RlmError(
      'VALIDATION',
      `overlapTokens must be an integer in [0, chunkTokens): ${overlapTokens}`,
      {
        overlapTokens,
        chunkTokens,
      },
    );
  }
  const maxTokens = positiveInt('maxTokens', opts.maxTokens, DEFAULT_MAX_TOKENS);
  const minTokens = opts.minTokens ?? Math.min(DEFAULT_MIN_TOKENS, maxTokens);
  if (!Number.isInteger(minTokens) || minTokens < 0 || minTokens > maxTokens) {
    throw new RlmError('VALIDATION', `minTokens must be an integer in [0, maxTokens]: ${minTokens}`, {
      minTokens,
    });
  }
  const resolved: ChunkerSettings = {
    chunkTokens,
    overlapTokens,
    minTokens,
    maxTokens,
    onNote: opts.onNote ?? (() => {}),
  };
  if (opts.path !== undefined) resolved.path = opts.path;
  return resolved;
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1) {
    throw new RlmError('VALIDATION', `${name} must be a positive integer: ${v}`, { [name]: v });
  }
  return v;
}
