/**
 * The flags and parser of `ik compare`, and their parsed type. Parser only: the comparison is
 * compare.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { integer } from "@optique/core/valueparser";
import { pathValue } from "../cli/path_value.ts";

const REF_HELP = "an evidence id (in $IK_RUNS_DIR, else ./runs), a record directory or its evidence.json";

/** Builds the parser for `ik compare` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const compareCommand = () => command("compare", object({
  cmd: constant("compare" as const),
  a: argument(pathValue("A", "record (an evidence id, a record directory or its evidence.json)"), { description: message`The reference record: ${text(REF_HELP)}.` }),
  b: argument(pathValue("B", "record (an evidence id, a record directory or its evidence.json)"), { description: message`The record compared with it (the ratio is B / A): ${text(REF_HELP)}.` }),
  allowIncomplete: option("--allow-incomplete", { description: message`Compare a record whose run was interrupted (complete: false).` }),
  resamples: withDefault(option("--resamples", integer({ min: 100, max: 1_000_000, metavar: "N" }), { description: message`Bootstrap resamples of each ratio's CI.` }), 2000),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Bootstrap seed: the same records and seed give the same intervals.` }), 0),
  json: option("--json", { description: message`Print the comparison as one JSON object.` }),
}), {
  brief: message`B against A: per bucket and metric, the ratio B/A with a paired bootstrap CI over rounds.`,
  description: message`Both must be single-mode serve_benchmark records (ik bench serve --rounds R) that asked the same requests: their identity.workload.request_set hashes must agree, else compare refuses and names what differs (exit 65). Rounds are paired by index; each round's value is the median over its ok requests in the bucket; the ratio is median(B) / median(A) over the paired rounds, with a t-scaled paired bootstrap 95% CI on the log scale. Incomplete (interrupted) records are refused unless --allow-incomplete.`,
});

/** The parsed flags of `ik compare`. */
export type CompareFlags = InferValue<ReturnType<typeof compareCommand>>;
