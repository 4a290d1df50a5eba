/**
 * The flags and parser of `ik export`, and their parsed type. Parser only: the export is
 * export.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { choice } from "@optique/core/valueparser";
import { pathValue } from "../cli/path_value.ts";

/** Builds the parser for `ik export` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const exportCommand = () => command("export", object({
  cmd: constant("export" as const),
  record: argument(pathValue("RECORD", "record (an evidence id, a record directory or its evidence.json)"), { description: message`An evidence id (in $IK_RUNS_DIR, else ./runs), a record directory, or its evidence.json. A capacity record exports its measurement.` }),
  format: option("--format", choice(["vllm", "csv", "jsonl"] as const), { description: message`vllm: one vllm bench serve result file per load level (+ runs.tsv for ik summarize vllm); csv: one row per level or bucket; jsonl: the per-request rows.` }),
  out: option("--out", pathValue("DIR"), { description: message`Directory to write into (created if needed; files of the same name are replaced).` }),
  json: option("--json", { description: message`Print {"files": [...]} as one JSON object on stdout.` }),
}), {
  brief: message`Write a record as vllm bench serve result files, CSV or JSONL, for existing dashboards and spreadsheets.`,
  description: message`--format vllm needs a load-mode record (ik bench serve --mode load): each level becomes <label>-<level>.json with vLLM's keys and units, the per-request arrays in seconds, and percentiles recomputed vLLM's way (linear interpolation; ik's records use nearest rank; the file's ik_percentiles key says so). max_concurrency is the run's in-flight cap (ik bench vllm's --max-concurrency) or a closed loop's workers, else null. A runs.tsv lets ik summarize vllm --runs DIR/runs.tsv --results DIR read the export back.`,
});

/** The parsed flags of `ik export`. */
export type ExportFlags = InferValue<ReturnType<typeof exportCommand>>;
