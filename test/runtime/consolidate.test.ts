/** Automatic consolidation after a remember leaves a topic another writer changed to the next remember. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RlmError } from '../../core/errors.ts';
import { topicChanged } from '../../memory/memories/memory-model.ts';
import type { Store } from '../../memory/store-api.ts';
import { autoConsolidate } from '../../src/runtime/consolidate.ts';
import { tempDir } from '../helpers/temp.ts';

/** A store whose topic needs consolidating and whose consolidate fails with `err`. */
function storeFailingWith(err: Error): Store {
  const rules = path.join(tempDir(), 'rules.json');
  writeFileSync(rules, JSON.stringify({ rules: [] }));
  return {
    memorySettings: async () => ({ autoConsolidate: `scripted:${rules}` }),
    needsConsolidation: async () => true,
    consolidate: async () => {
      throw err;
    },
  } as unknown as Store;
}

describe('autoConsolidate', () => {
  it('gives up quietly when the topic changed under it, and passes every other failure on', async () => {
    expect(await autoConsolidate(storeFailingWith(topicChanged('t', 1)), 't')).toBeNull();
    const other = new RlmError('PROVIDER', 'the model is down');
    await expect(autoConsolidate(storeFailingWith(other), 't')).rejects.toBe(other);
  });
});
