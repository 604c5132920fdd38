/**
 * JSON shapes that DESIGN.md fixes and that more than one surface prints: the CLI's `--json` and the
 * MCP server's structured content must stay identical, so both build them here.
 */
import type { RecallHit } from '../memory/memories.ts';
import type { SearchHit } from '../memory/types.ts';

/** Scores to four decimals: enough to rank by, without float noise in scripts' diffs. */
export function roundScore(n: number): number {
  return Math.round(n * 10000) / 10000;
}

/** `{results:[{id, score, preview, document, tags}]}` of `rlm search --json` and `rlm_search`. */
export function searchResults(hits: SearchHit[]): {
  results: { id: string; score: number; preview: string; document: string; tags: string[] }[];
} {
  return {
    results: hits.map((h) => ({
      id: h.id,
      score: roundScore(h.score),
      preview: h.preview,
      document: h.document,
      tags: h.tags,
    })),
  };
}

/** `{results:[{id, score, text, topic, importance, weight, created, tags, archived}]}` of `rlm recall --json` and `rlm_recall`. */
export function recallResults(hits: RecallHit[]): {
  results: {
    id: string;
    score: number;
    text: string;
    topic: string;
    importance: string;
    weight: number;
    created: string;
    tags: string[];
    archived: boolean;
  }[];
} {
  return {
    results: hits.map((h) => ({
      id: h.id,
      score: roundScore(h.score),
      text: h.text,
      topic: h.topic,
      importance: h.importance,
      weight: roundScore(h.weight),
      created: h.created,
      tags: h.tags,
      archived: h.archived,
    })),
  };
}
