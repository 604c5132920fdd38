import { parseDecimal } from '../../../core/decimal.ts';
import { RlmError } from '../../../core/errors.ts';
import { documentLinks, linkEnd } from '../../../memory/read.ts';
import { LINK_TYPES, type LinkType } from '../../../memory/types.ts';
import { linksResult, lookupFor } from '../../shapes.ts';
import { parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, shown, writeJson } from '../io.ts';
import { openStore, positionals } from '../store-arg.ts';
import { resolveTarget, shownPath } from './query.ts';

const LINKS_HELP = `usage: rlm links ID --store DIR [--type TYPE] [--json]

Lists the links of a chunk (ID is DOCUMENT:N): follows, context_of, related_to (computed), supports,
contradicts (by hand) and summarizes (a consolidation summary to its sources). For a document id, a
memory id (mem-…) or a file's path: the links of all its chunks that lead to other documents, and those
set by hand. The id and file go to stderr. --store falls back to $RLM_STORE.
--json prints {id, path, links:[{from, to, type, strength}]}.
`;

export async function links(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    type: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(LINKS_HELP);
    return EXIT_OK;
  }
  const [id] = positionals(pos, ['ID'], 'links');
  const type = values.type as LinkType | undefined;
  if (type !== undefined && !LINK_TYPES.includes(type))
    throw new RlmError('BAD_INPUT', `--type must be one of ${LINK_TYPES.join(', ')}`);
  const store = await openStore(values.store, io);
  try {
    const target = await resolveTarget(store, id!, io);
    const result =
      target.kind === 'chunk'
        ? linksResult(
            target.chunk.id,
            await store.neighbors(target.chunk.id, type),
            await lookupFor(store, [target.chunk.id]),
          )
        : linksResult(
            target.read.documents[0]!.id,
            await documentLinks(store, target.read.documents, type),
            await lookupFor(store, [target.read.documents[0]!.id]),
          );
    if (values.json) writeJson(io, result);
    else {
      io.stderr.write(`${shown(io.stderr, result.id, true)}  ${shownPath(result.path, io, io.stderr)}\n`);
      for (const l of result.links)
        io.stdout.write(
          `${l.type.padEnd(11)} ${shown(io.stdout, `${l.from} -> ${l.to}`, true)}  ${l.strength.toFixed(3)}\n`,
        );
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const LINK_HELP = `usage: rlm link FROM TO --type supports|contradicts --store DIR [--strength S] [--remove] [--json]

Sets (or with --remove deletes) a link by hand between two chunks. FROM and TO are chunk ids
(DOCUMENT:N); a document id or a memory id (mem-…) stands for its first chunk (a memory's only one),
and an empty document, which has none, cannot be linked. Strength in (0, 1], default 1. --store falls
back to $RLM_STORE.
--json prints {from, to, type, strength} with the chunk ids linked (with --remove: {removed}).
`;

export async function link(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    type: { type: 'string' },
    strength: { type: 'string' },
    remove: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(LINK_HELP);
    return EXIT_OK;
  }
  const [from, to] = positionals(pos, ['FROM', 'TO'], 'link');
  const type = values.type;
  if (type !== 'supports' && type !== 'contradicts') {
    throw new RlmError(
      'BAD_INPUT',
      '--type supports or --type contradicts is required (other link types are computed)',
    );
  }
  const strength = values.strength === undefined ? 1 : parseDecimal(values.strength, true);
  if (!(strength > 0 && strength <= 1))
    throw new RlmError('BAD_INPUT', `--strength must be a number in (0, 1], got '${values.strength}'`);
  const store = await openStore(values.store, io);
  try {
    if (values.remove) {
      const removed = await store.unlink(from!, to!, type);
      if (values.json) writeJson(io, { removed });
      else io.stderr.write(removed ? 'link removed\n' : 'no such link\n');
    } else {
      await store.link(from!, to!, type, strength);
      const [a, b] = [(await linkEnd(store, from!)) ?? from!, (await linkEnd(store, to!)) ?? to!];
      if (values.json) writeJson(io, { from: a, to: b, type, strength });
      else io.stderr.write(`linked ${shown(io.stderr, `${a} -${type}-> ${b}`, true)}\n`);
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}
