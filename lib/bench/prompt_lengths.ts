/**
 * Prompt lengths as the server counted them against the set's targets: a synthetic set states each
 * prompt's `input_tokens` (and how it was made, `length_method`); every request's
 * usage.prompt_tokens is held against it, per bucket (max and mean absolute error). Untagged
 * requests are the comparison; tagged ones (warm-up, rounds after the first) carry the cache tag's
 * few extra tokens, so they are summarised apart, as the excess the tag added.
 * @module
 */
import type { Prompt } from "../prompts/mod.ts";

interface Errs {
  n: number;
  max_abs_error: number | null;
  mean_abs_error: number | null;
  exact: number;
}

function summarise(diffs: number[]): Errs {
  if (!diffs.length) return { n: 0, max_abs_error: null, mean_abs_error: null, exact: 0 };
  const abs = diffs.map(Math.abs);
  return {
    n: diffs.length,
    max_abs_error: Math.max(...abs),
    mean_abs_error: Number((abs.reduce((a, b) => a + b, 0) / abs.length).toFixed(3)),
    exact: abs.filter((d) => d === 0).length,
  };
}

/** A prompt's target length (`input_tokens` of a synthetic line), or null. */
export function targetTokens(p: Prompt): number | null {
  const v = p.extra.input_tokens;
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : null;
}

/**
 * The comparison for a record's `data.prompt_lengths`, or null when no prompt states a target.
 * @param rows request rows (`id`, `bucket`, `ok`, `salt`, `prompt_tokens`)
 */
export function promptLengthCheck(rows: readonly Record<string, unknown>[], prompts: readonly Prompt[]): { check: Record<string, unknown>; limitations: string[] } | null {
  const byId = new Map(prompts.map((p) => [p.id, p]));
  if (![...byId.values()].some((p) => targetTokens(p) !== null)) return null;
  const methods: Record<string, number> = {};
  for (const p of prompts) {
    if (targetTokens(p) === null) continue;
    const m = typeof p.extra.length_method === "string" ? p.extra.length_method : "unstated";
    methods[m] = (methods[m] ?? 0) + 1;
  }
  const untagged = new Map<string, number[]>();
  const tagged = new Map<string, number[]>();
  let noUsage = 0;
  for (const r of rows) {
    if (!r.ok || typeof r.id !== "string") continue;
    const p = byId.get(r.id);
    const t = p ? targetTokens(p) : null;
    if (!p || t === null) continue;
    if (typeof r.prompt_tokens !== "number") {
      noUsage++;
      continue;
    }
    const into = r.salt === null || r.salt === undefined ? untagged : tagged;
    const d = into.get(p.bucket) ?? [];
    d.push(r.prompt_tokens - t);
    into.set(p.bucket, d);
  }
  const buckets: Record<string, unknown> = {};
  const all: number[] = [];
  for (const b of [...new Set(prompts.filter((p) => targetTokens(p) !== null).map((p) => p.bucket))]) {
    const u = untagged.get(b) ?? [];
    all.push(...u);
    const tg = tagged.get(b) ?? [];
    buckets[b] = {
      ...summarise(u),
      tagged: { n: tg.length, mean_excess: tg.length ? Number((tg.reduce((a, x) => a + x, 0) / tg.length).toFixed(3)) : null },
    };
  }
  const overall = summarise(all);
  const limitations: string[] = [];
  if (methods.words || methods.unstated) {
    limitations.push("prompt lengths are approximate: the set's input_tokens were counted as words, not by the server's tokenizer (make it with ik prompts synth --tokenize-via URL for exact lengths)");
  }
  if (overall.n > 0 && overall.max_abs_error !== 0) {
    limitations.push(`usage.prompt_tokens differed from the set's input_tokens in ${overall.n - overall.exact} of ${overall.n} untagged request(s) (max abs error ${overall.max_abs_error}, mean ${overall.mean_abs_error}; see data.prompt_lengths)`);
  }
  return {
    check: {
      definition: "per bucket: usage.prompt_tokens − the prompt's input_tokens over ok untagged requests (error = its absolute value); " +
        "tagged requests (warm-up, rounds after the first) carry the cache tag's extra tokens and are shown as their mean excess",
      length_methods: methods,
      all: overall,
      buckets,
      rows_without_usage: noUsage,
    },
    limitations,
  };
}
