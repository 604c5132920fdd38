/** The embedder spec forms, for errors and every `--embedder` help text (one list, so none falls behind). */
export const EMBEDDER_SPECS = 'hash, hash:DIM, openai:MODEL, ollama:MODEL or http(s)://HOST/v1#MODEL';
