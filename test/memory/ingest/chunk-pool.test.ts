import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { type ChunkJob, inlineChunker, runChunkJob } from '../../../memory/ingest/chunk-job.ts';
import {
  CHUNK_WORKER_MIN_BYTES,
  chunkerForIngest,
  workerChunker,
} from '../../../memory/ingest/chunk-pool.ts';
import { chunkText } from '../../../memory/ingest/chunkers/index.ts';
import { classifyChunk } from '../../../memory/ingest/classify.ts';
import { prose } from '../helpers/corpus.ts';

const jobs: ChunkJob[] = [
  { text: prose(1, 40), chunker: 'paragraph', path: '/docs/a.txt' },
  {
    text: '# Setup\n\nWe decided to use PostgreSQL.\n\n## Use\n\nI prefer short names.\n',
    chunker: 'markdown',
    path: '/docs/b.md',
  },
  {
    text: 'export function add(a: number, b: number): number {\n  return a + b;\n}\n',
    chunker: 'lines',
    path: '/src/c.ts',
  },
  { text: prose(2, 30), chunker: 'size', path: null, chunkTokens: 120, overlapTokens: 20 },
  { text: '{"role":"user"}\nnot json\n', chunker: 'turn', path: '/logs/d.jsonl' },
];

describe('runChunkJob', () => {
  it('chunks as chunkText does and types every draft as classifyChunk does', () => {
    const job = jobs[1]!;
    const { drafts, types, notes } = runChunkJob(job);
    expect(drafts).toEqual(chunkText(job.text, 'markdown', { path: '/docs/b.md' }));
    expect(types).toEqual(
      drafts.map((d) => classifyChunk(d.text, { chunker: 'markdown', path: '/docs/b.md' })),
    );
    expect(types).toContain('decision');
    expect(notes).toEqual([]);
  });

  it('passes the size options and collects the chunker notes', () => {
    expect(runChunkJob(jobs[3]!).drafts).toEqual(
      chunkText(jobs[3]!.text, 'size', { chunkTokens: 120, overlapTokens: 20 }),
    );
    expect(runChunkJob(jobs[4]!).notes.length).toBeGreaterThan(0);
  });
});

describe('workerChunker', () => {
  it('returns, in order, exactly what chunking inline returns', async () => {
    const chunker = workerChunker();
    try {
      const results = await Promise.all(jobs.map((job) => chunker.chunk(job)));
      expect(results).toEqual(jobs.map(runChunkJob));
    } finally {
      await chunker.close();
    }
  });

  it("gives back a chunking error with the error's code, and goes on with the next job", async () => {
    const chunker = workerChunker();
    try {
      const bad = chunker.chunk({ ...jobs[3]!, chunkTokens: -1 });
      await expect(bad).rejects.toSatisfy(
        (e) => isRlmError(e, 'VALIDATION') && /chunkTokens/.test(e.message),
      );
      expect(await chunker.chunk(jobs[0]!)).toEqual(runChunkJob(jobs[0]!));
    } finally {
      await chunker.close();
    }
  });

  it('rejects the jobs still pending when it is closed, and any job after', async () => {
    const chunker = workerChunker();
    const pending = chunker.chunk({ text: prose(3, 2000), chunker: 'paragraph', path: null });
    const outcome = pending.then(
      () => 'chunked',
      (e: unknown) => e,
    );
    await chunker.close();
    expect(isRlmError(await outcome, 'ABORTED')).toBe(true);
    await expect(chunker.chunk(jobs[0]!)).rejects.toSatisfy((e) => isRlmError(e, 'ABORTED'));
  });
});

describe('workerChunker when its thread fails', () => {
  const script = (code: string) => new URL(`data:text/javascript,${encodeURIComponent(code)}`);
  const failure = async (chunker: ReturnType<typeof workerChunker>) => {
    try {
      return await chunker.chunk(jobs[0]!).then(
        () => null,
        (e: unknown) => e,
      );
    } finally {
      await chunker.close();
    }
  };

  it('rejects with RUNTIME and the thread’s error when the thread throws', async () => {
    const err = await failure(workerChunker({ url: script('throw new Error("thread broke")') }));
    expect(isRlmError(err, 'RUNTIME')).toBe(true);
    expect((err as Error).message).toContain('thread broke');
  });

  it('rejects with RUNTIME when the thread exits without answering', async () => {
    const err = await failure(workerChunker({ url: script('process.exit(3)') }));
    expect(isRlmError(err, 'RUNTIME')).toBe(true);
    expect((err as Error).message).toContain('exit code 3');
  });

  it('rejects with MEMORY_LIMIT when the thread runs out of memory', async () => {
    const hog = 'const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length));';
    const err = await failure(
      workerChunker({
        url: script(hog),
        resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
      }),
    );
    expect(isRlmError(err, 'MEMORY_LIMIT')).toBe(true);
  });
});

describe('chunkerForIngest', () => {
  it('chunks inline below the threshold and on a worker from it on', async () => {
    expect(chunkerForIngest(CHUNK_WORKER_MIN_BYTES - 1)).toBe(inlineChunker);
    const chunker = chunkerForIngest(CHUNK_WORKER_MIN_BYTES);
    try {
      expect(chunker).not.toBe(inlineChunker);
      expect(await chunker.chunk(jobs[2]!)).toEqual(runChunkJob(jobs[2]!));
    } finally {
      await chunker.close();
    }
  });

  it('chunks inline, with the same results, when its worker cannot be made', async () => {
    let tries = 0;
    const chunker = chunkerForIngest(CHUNK_WORKER_MIN_BYTES, () => {
      tries++;
      throw new Error('no thread to spare');
    });
    try {
      expect(await Promise.all(jobs.map((job) => chunker.chunk(job)))).toEqual(jobs.map(runChunkJob));
      expect(tries).toBe(1);
    } finally {
      await chunker.close();
    }
  });

  it('starts its worker with the first job, once, and none when nothing is chunked', async () => {
    let started = 0;
    const start = () => {
      started++;
      return workerChunker();
    };
    await chunkerForIngest(CHUNK_WORKER_MIN_BYTES, start).close();
    expect(started).toBe(0);
    const chunker = chunkerForIngest(CHUNK_WORKER_MIN_BYTES, start);
    try {
      expect(await Promise.all([chunker.chunk(jobs[0]!), chunker.chunk(jobs[1]!)])).toEqual(
        [jobs[0]!, jobs[1]!].map(runChunkJob),
      );
      expect(started).toBe(1);
    } finally {
      await chunker.close();
    }
  });
});
