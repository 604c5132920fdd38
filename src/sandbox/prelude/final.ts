/*
 * The answer a block gives: `FINAL(value)` and `FINAL_VAR(name)`. A non-string answer becomes JSON when
 * it can, else its REPL display.
 */
import { $Error, $TypeError, G, hasOwn, jsonStringify } from './intrinsics.ts';
import { show } from './show.ts';

let finalAnswer: string | null = null;

/** The answer the current block gave, or null. */
export function currentFinal(): string | null {
  return finalAnswer;
}

/** Forgets the answer, at the start of a block. */
export function clearFinal(): void {
  finalAnswer = null;
}

/** A value as answer text: strings as they are, else JSON, else the REPL display. */
export function answerText(v: unknown): string {
  if (typeof v === 'string') return v;
  let json: string | undefined;
  try {
    json = jsonStringify(v);
  } catch {}
  return typeof json === 'string' ? json : show(v);
}

export function FINAL(answer: unknown): void {
  // biome-ignore lint/complexity/noArguments: FINAL() is a mistake, FINAL(undefined) an answer
  if (arguments.length === 0) throw new $TypeError('FINAL needs the answer: FINAL(answer)');
  finalAnswer = answerText(answer);
}

export function FINAL_VAR(name: unknown): void {
  if (typeof name !== 'string')
    throw new $TypeError('FINAL_VAR takes the variable name as a string: FINAL_VAR("answer")');
  if (!hasOwn(G, name)) throw new $Error('FINAL_VAR: no variable named ' + name);
  finalAnswer = answerText(G[name]);
}
