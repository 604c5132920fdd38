/**
 * Where a model call sits in the recursion tree: what the run state accounts it to and what the trace
 * records it under.
 */
import type { Model } from './model.ts';
import type { ModelCallKind } from './result.ts';

/** Where a model call sits in the tree, for accounting and the trace. */
export interface CallSite {
  span: string;
  depth: number;
  iteration: number;
  kind: ModelCallKind;
  /** The model to call instead of the depth's default (a per-call `model` of a sub-call). */
  model?: Model;
}
