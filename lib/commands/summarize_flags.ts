/**
 * The flags and parser of `ik summarize vllm`, and their parsed type. Parser only: the summary is
 * summarize.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, option } from "@optique/core/primitives";
import { float, integer, string } from "@optique/core/valueparser";
import { pathValue } from "../cli/path_value.ts";

const vllm = () => command("vllm", object({
  cmd: constant("summarize-vllm" as const),
  runs: option("--runs", pathValue("FILE"), { description: message`runs.tsv: tag, [pass], dataset, conc, serial_lo, serial_hi, [warmups], [catfile], [rc], [container] (tab-separated, with a header).` }),
  results: option("--results", pathValue("DIR"), { description: message`Directory of <tag>.json (vllm bench serve --save-result --save-detailed; JSONL from --append-result uses the last) and <tag>.samples.tsv manifests.` }),
  container: optional(option("--container", string({ metavar: "FILE" }), { description: message`Container log for every cell whose runs.tsv row names none (one boot for the whole unit).` })),
  boots: optional(option("--boots", string({ metavar: "FILE" }), { description: message`boots.tsv: one row per boot (tag, launcher_md5, image, env_sha, keys_n, policy, cache, gpc_boot, mem_boot, ...); any difference VOIDs a decision.` })),
  sbData: optional(option("--sb-data", string({ metavar: "FILE" }), { description: message`Spec-Bench question.jsonl: maps a manifest prompt hash to its category (c1 MTP tables).` })),
  sbDir: optional(option("--sb-dir", string({ metavar: "DIR" }), { description: message`Directory of the Spec-Bench split files named in runs.tsv catfile (R725 units).` })),
  sbOut: withDefault(option("--sb-out", integer({ min: 1, max: 10_000_000, metavar: "N" }), { description: message`The forced Spec-Bench output length: every specbench output must be N tokens.` }), 256),
  wantGpc: withDefault(option("--want-gpc", string({ metavar: "OFFSETS" }), { description: message`Expected core (GPC) clock offsets per card, space-separated.` }), "0 0"),
  wantMem: withDefault(option("--want-mem", string({ metavar: "OFFSETS" }), { description: message`Expected memory clock offsets per card, space-separated.` }), "4500 4500"),
  cacheMax: withDefault(option("--cache-max", float({ min: 0, max: 1, metavar: "FRAC" }), { description: message`Largest cached share of prompt tokens per cell (0.01 = 1 %).` }), 0.01),
  spreadMax: withDefault(option("--spread-max", float({ min: 0, metavar: "PCT" }), { description: message`Largest A/B spread of output tok/s, percent.` }), 3.0),
  spreadExempt: optional(option("--spread-exempt", string({ metavar: "C1,C2" }), { description: message`Concurrency levels reported but not gated by --spread-max (e.g. 1: boot-to-boot noise).` })),
  decide: optional(option("--decide", string({ metavar: "PASSES" }), { description: message`Passes that must all be complete, e.g. "A B": prints DECISION and exits 1 unless PUBLISHABLE.` })),
  jsonOut: optional(option("--json-out", string({ metavar: "FILE" }), { description: message`Also write the summary as JSON to FILE.` })),
  json: option("--json", { description: message`Print the summary as one JSON object on stdout instead of the tables.` }),
}), {
  brief: message`Summarise a unit of vllm bench serve result files: README tables, A/B spread, diagnostics, MTP per category, FLAGS, DECISION.`,
  description: message`Reads runs.tsv and, per cell, <tag>.json from --results (current, legacy and --append-result layouts), its container log (ik-request serial=… prompt=… cached=… gen=… acc=… prop=… lines, as ik mock --request-log prints) and <tag>.samples.tsv. Tables use vLLM's own percentiles from the files; tau = gen / (gen - accepted) from the container lines. A cell without its container log cannot be PUBLISHABLE. DECISION precedence: VOID (boots differ, clocks wrong) > NOT-PUBLISHABLE (a pass incomplete, integrity, cache or spread problems) > PUBLISHABLE.`,
});

/** Builds the parser for `ik summarize …` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const summarizeCommand = () => command("summarize", vllm(), {
  brief: message`Summaries of result files other tools wrote: vllm (vllm bench serve units).`,
  description: message`ik summarize vllm reads a unit of vllm bench serve result files with its container logs and prints the tables, FLAGS and an optional DECISION.`,
});

/** The parsed flags of `ik summarize vllm`. */
export type SummarizeFlags = InferValue<ReturnType<typeof summarizeCommand>>;
