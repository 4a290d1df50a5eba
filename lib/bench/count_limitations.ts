/** The limitations a benchmark's token counts and lengths put on its numbers (seed 000 _count_limitations). */

/** The row fields read here. */
export interface CountRow {
  id: string | null;
  ok: boolean;
  n_tokens: number | null;
  token_count_method: string | null;
  count_mismatch: string | null;
  tokens_per_event_max: number | null;
}

/**
 * Each limitation under its condition: usage counting (k_first assumed 1), SSE-event counting,
 * count mismatches, exact length asked but not honoured, no exact-length control, logprobs ids,
 * several tokens per event.
 */
export function countLimitations(
  rows: readonly CountRow[],
  exactAsked: readonly string[] | null,
  maxById: ReadonlyMap<string, number>,
  tokenIdMode: string,
  engineKind: string,
): string[] {
  const lim: string[] = [];
  const ok = rows.filter((r) => r.ok);
  const methods = new Set(ok.map((r) => r.token_count_method).filter(Boolean));
  if (methods.has("usage")) {
    lim.push("tokens counted from usage.completion_tokens (no streamed ids): decode tok/s assumes the first token event holds one token");
  }
  if (methods.has("tokenizer")) lim.push("tokens re-counted with --tokenizer from the generated text (no streamed ids, no usage)");
  if (methods.has("sse_events")) {
    lim.push("tokens counted as SSE events (no ids, no usage): only right if the server sends one token per event; pass --tokenizer to re-count");
  }
  const mism = ok.filter((r) => r.count_mismatch);
  if (mism.length) lim.push(`${mism.length} request(s): token counts disagree (${mism[0].count_mismatch})`);
  if (exactAsked && exactAsked.length) {
    const short = ok.filter((r) => r.n_tokens !== null && r.id !== null && maxById.has(r.id) && r.n_tokens !== maxById.get(r.id));
    if (short.length) {
      lim.push(`${short.length} request(s) did not generate exactly max_tokens although ${exactAsked.join("/")} was sent (e.g. ${short[0].id}: ${short[0].n_tokens} tokens)`);
    }
  } else {
    lim.push(`engine_kind=${engineKind}: no exact-length control sent; outputs stop at EOS, so lengths can differ between engines`);
  }
  if (tokenIdMode === "logprobs") lim.push("token ids requested through logprobs where needed: computing logprobs can slow decode");
  const multi = ok.filter((r) => (r.tokens_per_event_max ?? 0) > 1);
  if (multi.length) {
    const max = Math.max(...multi.map((r) => r.tokens_per_event_max ?? 0));
    lim.push(`${multi.length} request(s) streamed more than one token in an SSE event (max ${max}); counts use ids, ITL is per event`);
  }
  return lim;
}
