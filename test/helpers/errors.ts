import { isRlmError, type RlmError } from '../../core/errors.ts';

/** The RlmError `p` rejects with; fails the test when it resolves or rejects with anything else. */
export async function caught(p: Promise<unknown>): Promise<RlmError> {
  try {
    await p;
  } catch (err) {
    if (isRlmError(err)) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** The RlmError `fn` throws; fails the test when it returns or throws anything else. */
export function thrown(fn: () => unknown): RlmError {
  try {
    fn();
  } catch (err) {
    if (isRlmError(err)) return err;
    throw err;
  }
  throw new Error('expected a throw');
}
