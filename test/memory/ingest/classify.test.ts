import { describe, expect, it } from 'vitest';
import { classifyChunk, cueGatesHold, looksLikeCode } from '../../../memory/ingest/classify.ts';
import type { ChunkType } from '../../../memory/types.ts';

const prose = { chunker: 'paragraph' } as const;

const EXAMPLES: Record<ChunkType, string[]> = {
  decision: [
    'After the review we decided to use Postgres for the event store.',
    'Decision: the API stays REST; GraphQL is out of scope.',
    'We will use pnpm workspaces from now on.',
    'The team chose SQLite over Postgres for the CLI cache.',
    'We agreed to ship on Fridays only after the freeze.',
    'Nous avons décidé de garder Vitest pour les tests.',
    'Décision : la base reste en UTF-8.',
  ],
  preference: [
    'I prefer tabs in Makefiles and spaces everywhere else.',
    'Always use async/await instead of raw promise chains.',
    'Never use default exports in this codebase.',
    "I don't like long-lived feature branches.",
    'Je préfère les commits courts et fréquents.',
  ],
  pattern: [
    'Whenever the cache is cold, the first query takes two seconds.',
    'Every time we bump the SDK, the snapshot tests break.',
    'Rule of thumb: one concept per file.',
    'Flaky tests tend to involve timers or the network.',
    'Chaque fois que le serveur redémarre, la file se vide.',
  ],
  note: [
    'Note: the staging database is reset every night.',
    'TODO rename the config loader before the release',
    'Remember to rotate the API key next month.',
    '- [ ] update the changelog\n- [ ] tag the release',
    "N'oublie pas de mettre à jour la documentation.",
  ],
  fact: [
    'Paris is the capital of France.',
    'The Eiffel Tower was completed in 1889.',
    'The tower is 330 m tall.',
    'BM25 stands for Best Matching 25.',
    'Lyon est une ville située sur le Rhône.',
  ],
  code: [
    '```ts\nconst x = await load(path);\nconsole.log(x);\n```',
    'function add(a, b) {\n  return a + b;\n}\n\nexport default add;',
    'def main():\n    args = parse()\n    run(args)\n\nif __name__ == "__main__":\n    main()\n',
  ],
  text: [
    'The afternoon was quiet and the river moved slowly past the mill.',
    'Il faisait beau et les enfants jouaient dans le jardin.',
    'Thanks, that helps a lot!',
  ],
};

describe('classifyChunk', () => {
  for (const [type, texts] of Object.entries(EXAMPLES)) {
    it.each(texts)(`${type}: %s`, (text) => {
      expect(classifyChunk(text, prose)).toBe(type);
    });
  }

  it('calls any chunk of a source file code', () => {
    expect(classifyChunk('We decided to keep this comment.', { chunker: 'lines', path: 'src/a.ts' })).toBe(
      'code',
    );
    expect(classifyChunk('We decided to keep this comment.', { chunker: 'lines', path: 'app.log' })).toBe(
      'decision',
    );
  });

  it('does not call prose code because it mentions code words', () => {
    expect(classifyChunk('I prefer const over let when the value never changes.', prose)).toBe('preference');
    expect(looksLikeCode('Return the form to the desk (room 3) before noon; thanks.')).toBe(false);
  });

  it('does not count Unicode spaces as visible characters when weighing code punctuation', () => {
    // 4 punctuation marks per 7 visible characters; counting the spaces would dilute that under the bar.
    for (const space of ['\u3000', '\u00a0', '\u2003']) {
      const pad = space.repeat(60);
      const text = [`a${pad}=${pad}f(b);`, `c${pad}=${pad}g(d);`].join('\n');
      expect(looksLikeCode(text)).toBe(true);
      expect(looksLikeCode(text.replaceAll(space, 'w'))).toBe(false);
    }
  });

  it('asks long chunks for more than one cue', () => {
    const filler = 'The afternoon was quiet and the river moved slowly past the mill. '.repeat(70);
    expect(classifyChunk(`${filler}Decision: Redis.`, prose)).toBe('text');
    const decisions = 'We decided to use Redis. Decision: keep the TTL short. We will use one instance.';
    expect(classifyChunk(`${filler}${decisions}`, prose)).toBe('decision');
  });

  it('is deterministic', () => {
    const text = 'We decided to use Redis. Whenever it restarts, the cache is empty.';
    expect(classifyChunk(text, prose)).toBe(classifyChunk(text, prose));
  });

  it('skips a cue only where its pattern cannot match: every pattern that matches passes its gate', () => {
    const cuesSeen = Object.values(EXAMPLES).flat();
    const extra = [
      'WE DECIDED TO ship. DÉCISION : non. Nous AVONS décidé. Il est DÉCIDÉ que oui.',
      'I Really Prefer tabs. I DO NOT WANT that. My Favourite: none. NEVER USE eval.',
      'note : x\n  * NB: y\n- [X] done\n  - [ ] open\nTODO: z\nRappel: w',
      'The Population Of Lyon; La Capitale de la France; it Stands For X; in 1999; 12,5 km; 7 Years.',
      'Chaque Fois que. À CHAQUE FOIS. They TEND to. As A Rule. Une Règle. Ont Tendance À.',
      "N'OUBLIEZ PAS. Ne Pas Oublier. Penser À. Don't Forget. Remember That.",
    ];
    const shapes = [...cuesSeen, ...extra];
    const texts = shapes.flatMap((t) => [t, t.toUpperCase(), t.toLowerCase(), `x ${t} y`, `line\n${t}\nend`]);
    for (const t of texts) expect(cueGatesHold(t), t).toBe(true);
  });

  it('classifies by the patterns alone where lowercasing would hide a letter they read as ASCII', () => {
    // Case-insensitive matching reads the long s (ſ) as s; lowercasing leaves it as it is.
    expect(classifyChunk('Deciſion: the queue stays in memory.', prose)).toBe('decision');
    expect(classifyChunk('We ſettled on one worker.', prose)).toBe('decision');
  });
});
