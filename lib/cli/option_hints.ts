/**
 * Hints for an option a command does not know: a near miss of one of its own options
 * (`--duraton-s` → `--duration-s`, `--rate` → `--rates`, `--base` → `--base-url`), or a flag of the
 * tool the user comes from (`vllm bench serve --request-rate`, AIPerf's `--request-count`,
 * guidellm's `--max-seconds`) mapped to what ik calls it, and for vLLM's own flags on
 * `ik bench serve` a pointer to `ik bench vllm`. Pure: names in, one sentence out.
 * @module
 */
import type { Parser } from "@optique/core/parser";

type Term = { type?: string; name?: string; names?: unknown; terms?: unknown };

const isCommand = (t: unknown, name?: string): boolean =>
  !!t && typeof t === "object" && (t as Term).type === "command" && (name === undefined || (t as Term).name === name);

/** The option names in a usage sequence, not those of its subcommands. */
function namesIn(seq: readonly unknown[], out: Set<string>): void {
  const walk = (t: unknown): void => {
    if (!t || typeof t !== "object") return;
    if (Array.isArray(t)) {
      if (isCommand(t[0])) return; // a subcommand's own sequence
      return t.forEach(walk);
    }
    const term = t as Term;
    if (term.type === "option" && Array.isArray(term.names)) for (const n of term.names) if (typeof n === "string") out.add(n);
    if (term.terms) walk(term.terms);
  };
  seq.forEach(walk);
}

/**
 * The deepest command the leading words of argv name (`bench serve`), and every option name it
 * accepts (`--rates`, `-h`), read from the parser's usage terms.
 */
export function commandOptions(parser: Parser<"sync", unknown, unknown>, argv: readonly string[]): { path: string[]; names: string[] } {
  const path: string[] = [];
  let seq: readonly unknown[] = ((parser as unknown as { usage?: unknown[] }).usage ?? []) as unknown[];
  for (const word of argv) {
    if (word.startsWith("-")) break;
    let next: readonly unknown[] | null = null;
    const search = (s: readonly unknown[]): void => {
      for (let i = 0; i < s.length && !next; i++) {
        const t = s[i] as Term;
        if (isCommand(t, word)) next = s.slice(i + 1);
        else if (t && t.type === "exclusive" && Array.isArray(t.terms)) for (const alt of t.terms) if (!next && Array.isArray(alt) && isCommand(alt[0], word)) next = alt.slice(1);
      }
    };
    search(seq);
    if (!next) break;
    path.push(word);
    seq = next;
  }
  const out = new Set<string>();
  namesIn(seq, out);
  return { path, names: [...out] };
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps count 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The options `bad` most likely meant, best first (at most 3): one that extends it at a word
 * boundary or that it extends (`--base` ↔ `--base-url`), then the closest by edit distance within
 * a third of its length (at least 1, at most 3).
 */
export function nearOptions(bad: string, names: readonly string[]): string[] {
  const flag = bad.replace(/=.*$/, "");
  if (names.includes(flag)) return [];
  const prefix = names.filter((n) => n.startsWith(`${flag}-`) || flag.startsWith(`${n}-`) || (n.startsWith(flag) && flag.length >= 5 && n.length - flag.length <= 2));
  const limit = Math.min(3, Math.max(1, Math.floor(flag.replace(/^-+/, "").length / 3)));
  const close = names
    .filter((n) => !prefix.includes(n))
    .map((n) => ({ n, d: editDistance(flag, n) }))
    .filter((x) => x.d <= limit)
    .sort((x, y) => x.d - y.d || x.n.localeCompare(y.n))
    .map((x) => x.n);
  return [...prefix.sort((x, y) => x.length - y.length), ...close].slice(0, 3);
}

const BASE_URL = "--base-url http://HOST:PORT (the server's root)";
const PROMPTS = "--prompts FILE, a prompt set that 'ik prompts synth --bucket NAME:IN:OUT' makes";
const RECORDS = "ik always writes its record (under $IK_RUNS_DIR, or --run-dir DIR); 'ik export --format vllm --out DIR' writes vLLM's result files from it";

/** The target (`--url`, AIPerf's) in `ik bench vllm`'s words. */
const VLLM_BASE = "--base-url URL, or --host HOST --port PORT";

/**
 * `vllm bench serve`'s flags that `ik bench vllm` takes as they are: on `ik bench serve` their
 * hint also points there.
 */
export const VLLM_BENCH_FLAGS: ReadonlySet<string> = new Set([
  "--request-rate", "--max-concurrency", "--num-prompts", "--dataset-name", "--dataset-path", "--random-input-len", "--random-output-len",
  "--random-range-ratio", "--random-prefix-len", "--goodput", "--percentile-metrics", "--metric-percentiles", "--save-result", "--save-detailed",
  "--result-dir", "--result-filename", "--host", "--port", "--backend", "--endpoint", "--served-model-name", "--ignore-eos", "--temperature",
]);

/**
 * Other tools' flags (vLLM's `bench serve`, AIPerf, guidellm) and what `ik bench serve` and
 * `ik bench vllm` call them, by ik command path.
 */
export const FOREIGN_FLAGS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "bench serve": {
    "--request-rate": "--rates R,S with --mode load (open-loop Poisson arrivals per level; 'inf' is --closed-loop)",
    "--max-concurrency": "--concurrency N --closed-loop for N requests always in flight (--concurrency alone offers N / e2e_ref open-loop)",
    "--num-prompts": "--requests N with --mode load (exactly N arrivals per level), or --rounds N (single)",
    "--request-count": "--requests N with --mode load (exactly N arrivals per level)",
    "--max-requests": "--requests N with --mode load (exactly N arrivals per level)",
    "--dataset-name": "--dataset NAME --dataset-path FILE (sharegpt, sonnet, jsonl, burstgpt, azure, mooncake), or --prompts FILE",
    "--data": "--dataset NAME --dataset-path FILE (sharegpt, sonnet, jsonl, burstgpt, azure, mooncake), or --prompts FILE",
    "--random-input-len": PROMPTS,
    "--random-output-len": `${PROMPTS}, or --max-tokens N`,
    "--random-range-ratio": PROMPTS,
    "--random-prefix-len": PROMPTS,
    "--synthetic-input-tokens-mean": PROMPTS,
    "--isl": PROMPTS,
    "--output-tokens-mean": "--max-tokens N",
    "--osl": "--max-tokens N",
    "--goodput": "--slo-ttft-p95-ms, --slo-tpot-p95-ms and --slo-e2e-p95-ms (goodput counts the requests meeting them)",
    "--percentile-metrics": "nothing: every load level reports p50/p90/p95/p99 of TTFT, TPOT, ITL and e2e",
    "--metric-percentiles": "nothing: every load level reports p50/p90/p95/p99 of TTFT, TPOT, ITL and e2e",
    "--save-result": RECORDS,
    "--save-detailed": RECORDS,
    "--result-dir": RECORDS,
    "--result-filename": RECORDS,
    "--artifact-dir": RECORDS,
    "--output-path": RECORDS,
    "--url": BASE_URL,
    "--target": BASE_URL,
    "--host": BASE_URL,
    "--port": BASE_URL,
    "--backend": "--api chat|completions and --engine-kind vllm|sglang|llamacpp|trtllm|generic",
    "--endpoint": "--api chat|completions",
    "--endpoint-type": "--api chat|completions",
    "--served-model-name": "--model NAME (the name the server serves)",
    "--ignore-eos": "--exact-length (on by default: the engine profile's way to make each answer run to --max-tokens)",
    "--temperature": "--extra-body '{\"temperature\": T}'",
    "--max-seconds": "--duration-s S",
    "--benchmark-duration": "--duration-s S",
    "--warmup-request-count": "--warmup N",
    "--rate-type": "--mode load with --rates R,S, or --concurrency N",
  },
  "bench vllm": {
    "--request-count": "--num-prompts N",
    "--max-requests": "--num-prompts N",
    "--concurrency": "--max-concurrency N (a cap on requests in flight over the arrivals; with --request-rate inf, N always in flight)",
    "--rates": "--request-rate R (one rate per run; a grid of rates is 'ik bench serve --mode load --rates R,S')",
    "--prompts": "--dataset-name random, or 'ik bench serve --prompts FILE' for a prompt set",
    "--max-tokens": "--random-output-len N",
    "--synthetic-input-tokens-mean": "--random-input-len N",
    "--isl": "--random-input-len N",
    "--output-tokens-mean": "--random-output-len N",
    "--osl": "--random-output-len N",
    "--max-seconds": "--num-prompts N (a run is counted in requests, as vLLM's)",
    "--duration-s": "--num-prompts N (a run is counted in requests, as vLLM's)",
    "--benchmark-duration": "--num-prompts N (a run is counted in requests, as vLLM's)",
    "--url": VLLM_BASE,
    "--target": VLLM_BASE,
    "--warmup-request-count": "--num-warmups N",
    "--warmup": "--num-warmups N",
    "--artifact-dir": "--save-result --result-dir DIR",
    "--output-path": "--save-result --result-dir DIR --result-filename NAME",
    "--endpoint-type": "--backend openai|openai-chat",
    "--rate-type": "--request-rate R, or inf",
    "--api": "--backend openai (completions) or openai-chat (chat)",
  },
};

/**
 * One sentence for an unknown option of the command at `path` (`"bench serve"`), or null:
 * "That is another tool's flag: in 'ik bench serve' use --rates …" for a known foreign flag, else
 * "Did you mean …?".
 */
export function optionHint(path: string, bad: string, names: readonly string[]): string | null {
  const flag = bad.replace(/=.*$/, "");
  const foreign = FOREIGN_FLAGS[path]?.[flag];
  if (foreign) {
    const vllm = path === "bench serve" && VLLM_BENCH_FLAGS.has(flag) ? `; or run 'ik bench vllm', which takes vllm bench serve's ${flag} as it is` : "";
    // ik bench vllm's table also maps ik bench serve's own names (--rates, --prompts) to vLLM's.
    const what = path === "bench vllm" ? "That is not a vllm bench serve flag" : "That is another tool's flag";
    return `${what}: in 'ik ${path}' use ${foreign}${vllm}`;
  }
  const near = nearOptions(flag, names);
  if (!near.length) return null;
  return near.length === 1 ? `Did you mean \`${near[0]}\`?` : `Did you mean one of ${near.map((n) => `\`${n}\``).join(", ")}?`;
}
