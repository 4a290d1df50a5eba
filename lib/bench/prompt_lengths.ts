/**
 * Prompt lengths as the server counted them against the set's targets: a synthetic set states each
 * prompt's `input_tokens` (and how it was made, `length_method`); every request's
 * usage.prompt_tokens is held against it, per bucket (max and mean absolute error). Untagged
 * requests are the comparison; tagged ones (warm-up, rounds after the first, a load pool reused with
 * a prefix tag) carry the tag's few extra tokens, so they are summarised apart, as the excess the
 * tag added. The tally is kept row by row, so a load run (which keeps no rows) and a merge of
 * shards (which reads them back from the journals, where each row states its
 * `target_prompt_tokens`) give the same check as single mode.
 * @module
 */
import type { Prompt } from "../prompts/mod.ts";

/** A prompt's target length (`input_tokens` of a synthetic line), or null. */
export function targetTokens(p: Prompt): number | null {
  const v = p.extra.input_tokens;
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : null;
}

/** How many of the set's prompts with a target had their length made each way (`length_method`). */
export function lengthMethods(prompts: readonly Prompt[]): Record<string, number> {
  const methods: Record<string, number> = {};
  for (const p of prompts) {
    if (targetTokens(p) === null) continue;
    const m = typeof p.extra.length_method === "string" ? p.extra.length_method : "unstated";
    methods[m] = (methods[m] ?? 0) + 1;
  }
  return methods;
}

/** The row fields the tally reads. */
export interface LengthRow {
  ok: boolean;
  bucket?: string | null;
  salt?: string | null;
  prompt_tokens?: number | null;
  /** The prompt's target length (its `input_tokens`), when the set states one. */
  target_prompt_tokens?: number | null;
}

/** Running error sums of one bucket. */
class Errors {
  n = 0;
  max = 0;
  sumAbs = 0;
  exact = 0;
  tagged = 0;
  taggedExcess = 0;

  merge(o: Errors): void {
    this.n += o.n;
    this.max = Math.max(this.max, o.max);
    this.sumAbs += o.sumAbs;
    this.exact += o.exact;
    this.tagged += o.tagged;
    this.taggedExcess += o.taggedExcess;
  }

  view(): { n: number; max_abs_error: number | null; mean_abs_error: number | null; exact: number } {
    if (!this.n) return { n: 0, max_abs_error: null, mean_abs_error: null, exact: 0 };
    return { n: this.n, max_abs_error: this.max, mean_abs_error: Number((this.sumAbs / this.n).toFixed(3)), exact: this.exact };
  }
}

/** The record's `data.prompt_lengths` and the limitations it puts on the numbers. */
export interface PromptLengthReport {
  check: Record<string, unknown>;
  limitations: string[];
}

/** Usage prompt_tokens against the targets, kept row by row (merge() adds another tally). */
export class PromptLengthTally {
  readonly #buckets = new Map<string, Errors>();
  /** ok rows with a target but no usage.prompt_tokens. */
  rowsWithoutUsage = 0;

  /** Lists a bucket even if no row of it arrives (single mode names every bucket of the set). */
  declare(bucket: string): void {
    if (!this.#buckets.has(bucket)) this.#buckets.set(bucket, new Errors());
  }

  /** Adds one request row; rows that failed or state no target are not counted. */
  add(r: LengthRow): void {
    const t = r.target_prompt_tokens;
    if (!r.ok || typeof t !== "number") return;
    if (typeof r.prompt_tokens !== "number") {
      this.rowsWithoutUsage++;
      return;
    }
    const bucket = typeof r.bucket === "string" ? r.bucket : "all";
    this.declare(bucket);
    const e = this.#buckets.get(bucket) as Errors;
    const d = r.prompt_tokens - t;
    if (r.salt !== null && r.salt !== undefined) {
      e.tagged++;
      e.taggedExcess += d;
      return;
    }
    const a = Math.abs(d);
    e.n++;
    e.sumAbs += a;
    e.max = Math.max(e.max, a);
    if (a === 0) e.exact++;
  }

  /** Adds another tally (a level's, a shard's). */
  merge(o: PromptLengthTally): void {
    for (const [b, e] of o.#buckets) {
      this.declare(b);
      (this.#buckets.get(b) as Errors).merge(e);
    }
    this.rowsWithoutUsage += o.rowsWithoutUsage;
  }

  /**
   * The check, or null when nothing states a target (no method and no row with a target).
   * @param methods the set's `lengthMethods`
   */
  report(methods: Readonly<Record<string, number>>): PromptLengthReport | null {
    if (!Object.keys(methods).length && !this.#buckets.size && !this.rowsWithoutUsage) return null;
    const all = new Errors();
    const buckets: Record<string, unknown> = {};
    for (const [b, e] of this.#buckets) {
      all.merge(e);
      buckets[b] = { ...e.view(), tagged: { n: e.tagged, mean_excess: e.tagged ? Number((e.taggedExcess / e.tagged).toFixed(3)) : null } };
    }
    const overall = all.view();
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
          "tagged requests (warm-up, rounds after the first, a reused load prompt) carry the cache tag's extra tokens and are shown as their mean excess",
        length_methods: { ...methods },
        all: overall,
        buckets,
        rows_without_usage: this.rowsWithoutUsage,
      },
      limitations,
    };
  }
}

/**
 * The comparison for a single-mode record's `data.prompt_lengths`, or null when no prompt states a
 * target.
 * @param rows request rows (`id`, `bucket`, `ok`, `salt`, `prompt_tokens`)
 */
export function promptLengthCheck(rows: readonly Record<string, unknown>[], prompts: readonly Prompt[]): PromptLengthReport | null {
  const methods = lengthMethods(prompts);
  if (!Object.keys(methods).length) return null;
  const byId = new Map(prompts.map((p) => [p.id, p]));
  const tally = new PromptLengthTally();
  for (const p of prompts) if (targetTokens(p) !== null) tally.declare(p.bucket);
  for (const r of rows) {
    const p = typeof r.id === "string" ? byId.get(r.id) : undefined;
    const t = p ? targetTokens(p) : null;
    if (!p || t === null) continue;
    tally.add({ ok: r.ok === true, bucket: p.bucket, salt: r.salt as string | null, prompt_tokens: r.prompt_tokens as number | null, target_prompt_tokens: t });
  }
  return tally.report(methods);
}
