/** The model spec forms, for usage errors and every `--model` help text (one list, so none falls behind). */
export const MODEL_SPECS =
  'anthropic:MODEL, openai:MODEL, claude-code[:MODEL], scripted:FILE, replay:TRACE.jsonl or relay:DIR';
