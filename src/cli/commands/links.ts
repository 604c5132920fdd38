import { RlmError } from '../../../core/errors.ts';
import { LINK_TYPES, type LinkType } from '../../../memory/types.ts';
import { linksResult, lookupFor } from '../../shapes.ts';
import { parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, writeJson } from '../io.ts';
import { openStore, positionals } from '../store-arg.ts';
import { chunkNotFound, shownPath } from './query.ts';

const LINKS_HELP = `usage: rlm links ID --store DIR [--type TYPE] [--json]

Lists a chunk's links: follows, context_of, related_to (computed), supports, contradicts (by hand).
The chunk's id and file go to stderr. --json prints {id, path, links:[{from, to, type, strength}]}.
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
    if (!(await store.getChunk(id!))) throw chunkNotFound(id!);
    const result = linksResult(id!, await store.neighbors(id!, type), await lookupFor(store, [id!]));
    if (values.json) writeJson(io, result);
    else {
      io.stderr.write(`${id}  ${shownPath(result.path, io)}\n`);
      for (const l of result.links)
        io.stdout.write(`${l.type.padEnd(11)} ${l.from} -> ${l.to}  ${l.strength.toFixed(3)}\n`);
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const LINK_HELP = `usage: rlm link FROM TO --type supports|contradicts --store DIR [--strength S] [--remove] [--json]

Sets (or with --remove deletes) a link by hand between two chunks. Strength in (0, 1], default 1.
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
  const strength = values.strength === undefined ? 1 : Number(values.strength);
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
      if (values.json) writeJson(io, { from, to, type, strength });
      else io.stderr.write(`linked ${from} -${type}-> ${to}\n`);
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}
