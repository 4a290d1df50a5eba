/**
 * The flags and parser of `ik merge`, and their parsed type. Parser only: the merge is
 * merge.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { multiple, optional } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { string } from "@optique/core/valueparser";
import { pathValue } from "../cli/path_value.ts";

/** Builds the parser for `ik merge` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const mergeCommand = () => command("merge", object({
  cmd: constant("merge" as const),
  dirs: multiple(argument(pathValue("DIR"), { description: message`A slice's directory, or a directory holding slices (a shared $IK_RUNS_DIR, its .staging/ included).` }), {
    min: 1,
    errors: { tooFew: message`needs at least one DIR: the slices' directories, or the store that holds them (e.g. ik merge "$IK_RUNS_DIR")` },
  }),
  group: optional(option("--group", string({ metavar: "ID" }), { description: message`Merge only this group's slices (when the directories hold several runs).` })),
  allowPartial: option("--allow-partial", {
    description: message`Merge although shards are missing, killed (only a .staging journal) or interrupted: the record is complete: false, names them, drops their requests from the offered load and states N* as a lower bound.`,
  }),
  failOnSlo: option("--fail-on-slo", { description: message`Exit 2 when no level met the SLO (N* or rate* is null).` }),
  json: option("--json", { description: message`Print the capacity record as one JSON object on stdout (its data.measurement is the merged measured record).` }),
}), {
  brief: message`Join a sharded load run's slices (bench serve --shard) into one measured and one capacity record.`,
  description: message`Every slice must come from one run: the same group id, schedule hash, request set, seed, grid, SLO, model, GPUs, price, timeouts, gap, --start-at and ik build, each shard K of S once, every seq once and on shard seq mod S. Rows are put on one clock through each shard's (wall, monotonic) anchor, ITL comes from the outputs files, and every level is computed in canonical (level, seq) order: merging one process's run split by seq gives that run's numbers. Per shard it reports the send lag against the shared wall timetable and names a shard more than 5 ms off the others, or whose host clock is unsynced or claims more than 5 ms error.`,
});

/** The parsed flags of `ik merge`. */
export type MergeFlags = InferValue<ReturnType<typeof mergeCommand>>;
