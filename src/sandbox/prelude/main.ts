/*
 * The prelude's entry: what the isolate's script evaluates to. Evaluating the bundle runs every
 * module's top level, which only captures built-ins (intrinsics.ts) and defines functions; the
 * function returned here is the first stage, called before any model code runs.
 */
// First: the built-ins are captured before any other module's top level runs.
import './intrinsics.ts';
import { harden } from './harden.ts';
import { init } from './init.ts';
import { attachMirror } from './mirror.ts';
import { installWeb } from './web.ts';

/**
 * Stage one: binds the output mirror, defines the web globals and hardens the isolate. Returns `init`,
 * the second stage (init.ts). No host object exists in the isolate yet.
 */
export default function stage1(outputMirror: SharedArrayBuffer | undefined): typeof init {
  attachMirror(outputMirror);
  installWeb();
  harden();
  return init;
}
