/**
 * `ik prompts synth` with lengths made by a counter: the server's own tokenizer (`--tokenize-via`,
 * the whole chat request counted, template included: the number usage.prompt_tokens reports), a
 * local tokenizer.json (the message text only), or words (approximate). Optional per bucket:
 * a shared prefix of P exact tokens (vLLM's `--random-prefix-len`, SGLang's generated shared
 * prefix) with the cache tag placed after it (`cache_salt_at`), and per-prompt lengths drawn
 * uniformly within ±ratio (vLLM's `--random-range-ratio`) or from a normal (AIPerf's mean/stddev).
 * Seeded: the same arguments and the same tokenizer give the same bytes.
 * @module
 */
import { SeededRng } from "../stats/mod.ts";
import { fitWords, type LengthEstimate } from "./exact_length.ts";
import { bucketSeed, type SynthBucket } from "./synth.ts";

/** How lengths are made, and the counts it gives. */
export interface LengthCounter {
  /** `server_tokenize:<engine>`, `tokenizer` or `words`. */
  method: string;
  /** Prompt tokens of a request whose only message (or prompt) is this text, as this method knows them. */
  request(text: string): Promise<number>;
}

/** Per-prompt length spread. */
export type LengthSpread =
  | { kind: "fixed" }
  /**
   * Uniform within ±ratio; `fixedInput` tokens of the input are left out of the draw (vLLM's
   * random dataset: the prefix, then a length drawn around --random-input-len).
   */
  | { kind: "range"; ratio: number; fixedInput?: number }
  | { kind: "normal"; inputStddev: number; outputStddev: number };

/** What to make. */
export interface ExactSynthOptions {
  buckets: readonly SynthBucket[];
  perBucket: number;
  seed: number;
  counter: LengthCounter;
  /** Shared prefix tokens per bucket (0 = none). */
  prefixLen: number;
  spread: LengthSpread;
  /** Counts per prompt at most (default 12). */
  maxCallsPerPrompt?: number;
}

/** Per bucket, what was made. */
export interface BucketReport {
  n: number;
  exact: number;
  /** Largest |counted − target| over the bucket's prompts (0 when every one is exact). */
  max_abs_off_target: number;
  /** Tokens the method counts for an empty message (template and prefix): the least a prompt can have. */
  floor_tokens: number;
  /** Prompts whose drawn target was below that floor and was raised to it. */
  raised_to_floor: number;
}

/** The set's text and how it was made. */
export interface ExactSynthResult {
  text: string;
  report: Record<string, BucketReport>;
}

/** A target drawn for one prompt: [input, output]. */
function drawLengths(b: SynthBucket, spread: LengthSpread, rng: SeededRng): [number, number] {
  if (spread.kind === "fixed") return [b.inputTokens, b.outputTokens];
  if (spread.kind === "range") {
    const pick = (mean: number) => {
      const lo = Math.max(1, Math.floor(mean * (1 - spread.ratio)));
      const hi = Math.max(lo, Math.ceil(mean * (1 + spread.ratio)));
      return lo + rng.int(hi - lo + 1);
    };
    const fixed = Math.min(spread.fixedInput ?? 0, b.inputTokens - 1);
    return [fixed + pick(b.inputTokens - fixed), pick(b.outputTokens)];
  }
  const n = (mean: number, sd: number) => (sd > 0 ? Math.max(1, Math.round(mean + sd * rng.normal())) : mean);
  return [n(b.inputTokens, spread.inputStddev), n(b.outputTokens, spread.outputStddev)];
}

/**
 * Makes the JSONL. Each line: `id`, `bucket`, one user message, `max_tokens`, `input_tokens` (as the
 * method counted the request), `length_method`, and with a prefix `shared_prefix_tokens` and
 * `cache_salt_at` (the character offset in the message where a cache tag goes: after the prefix).
 * @throws RangeError when the prefix leaves no room in a bucket (the caller makes it a usage error)
 */
export async function synthExact(o: ExactSynthOptions): Promise<ExactSynthResult> {
  const lines: string[] = [];
  const report: Record<string, BucketReport> = {};
  const maxCalls = o.maxCallsPerPrompt ?? 12;
  for (const b of o.buckets) {
    // The bucket's name is in the seed: two buckets of the same lengths get different prompts.
    const rng = new SeededRng(o.seed, bucketSeed(b.name), b.inputTokens, b.outputTokens);
    const lenRng = new SeededRng(o.seed, bucketSeed(b.name), b.inputTokens, b.outputTokens, 1);
    let prefix = "";
    if (o.prefixLen > 0) {
      // Counted in place: the prefix adds exactly P tokens to the request (after the template's
      // head), as vLLM's random prefix puts P token ids in front of the rest.
      const empty = await o.counter.request("");
      const est: LengthEstimate = { base: empty, perWord: 1.3 };
      const fit = await fitWords((ws) => ws.join(" "), o.counter.request, empty + o.prefixLen, rng, est, maxCalls * 2);
      if (!fit.exact) throw new RangeError(`bucket ${b.name}: no text of exactly ${o.prefixLen} prefix tokens was found (closest ${fit.tokens - empty})`);
      prefix = fit.text;
    }
    const join = (ws: readonly string[]) => (prefix ? (ws.length ? `${prefix} ${ws.join(" ")}` : prefix) : ws.join(" "));
    const floor = await o.counter.request(join([]));
    const est: LengthEstimate = { base: floor, perWord: 1.3 };
    const rep: BucketReport = { n: 0, exact: 0, max_abs_off_target: 0, floor_tokens: floor, raised_to_floor: 0 };
    if (b.inputTokens <= floor) {
      throw new RangeError(
        `bucket ${b.name}: ${b.inputTokens} input tokens is not more than the ${floor} an empty message already counts` +
          (prefix ? ` (template and the ${o.prefixLen}-token prefix)` : " (the chat template)"),
      );
    }
    for (let i = 0; i < o.perBucket; i++) {
      let [target, maxTokens] = drawLengths(b, o.spread, lenRng);
      if (target <= floor) {
        target = floor + 1;
        rep.raised_to_floor++;
      }
      const fit = await fitWords(join, o.counter.request, target, rng, est, maxCalls);
      rep.n++;
      if (fit.exact) rep.exact++;
      rep.max_abs_off_target = Math.max(rep.max_abs_off_target, Math.abs(fit.tokens - target));
      const line: Record<string, unknown> = {
        id: `${b.name}-${i}`,
        bucket: b.name,
        messages: [{ role: "user", content: fit.text }],
        max_tokens: maxTokens,
        input_tokens: fit.tokens,
        length_method: o.counter.method,
      };
      if (!fit.exact) line.target_input_tokens = target;
      if (prefix) {
        line.shared_prefix_tokens = o.prefixLen;
        line.cache_salt_at = Math.min(fit.text.length, prefix.length + 1);
      }
      line.source = `ik prompts synth (seed ${o.seed}, lengths by ${o.counter.method})`;
      lines.push(JSON.stringify(line));
    }
    report[b.name] = rep;
  }
  return { text: lines.join("\n") + "\n", report };
}
