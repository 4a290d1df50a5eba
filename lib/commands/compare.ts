/**
 * `ik compare A B`: B against A, two single-mode serve_benchmark records that asked the same
 * requests. Per bucket and metric, the ratio of medians B / A with a paired bootstrap CI over
 * rounds. Refuses (exit 65, naming what differs) records whose request_set differs, and
 * incomplete records unless --allow-incomplete.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message, text } from "@optique/core/message";
import { withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { argument, command, constant, option } from "@optique/core/primitives";
import { integer, string } from "@optique/core/valueparser";
import { dataError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import {
  assertComparable,
  compareRecords,
  differenceNotes,
  loadRecordRef,
  readRequestRows,
  renderComparison,
  requestSetOf,
  sideFacts,
} from "../compare/mod.ts";
import { storeRoot } from "../evidence/mod.ts";
import type { CommandContext } from "./context.ts";

const REF_HELP = "an evidence id (in $IK_RUNS_DIR, else ./runs), a record directory or its evidence.json";

/** Parser for `ik compare`. */
export const compareCommand = command("compare", object({
  cmd: constant("compare" as const),
  a: argument(string({ metavar: "A" }), { description: message`The reference record: ${text(REF_HELP)}.` }),
  b: argument(string({ metavar: "B" }), { description: message`The record compared with it (the ratio is B / A): ${text(REF_HELP)}.` }),
  allowIncomplete: option("--allow-incomplete", { description: message`Compare a record whose run was interrupted (complete: false).` }),
  resamples: withDefault(option("--resamples", integer({ min: 100, max: 1_000_000, metavar: "N" }), { description: message`Bootstrap resamples of each ratio's CI.` }), 2000),
  seed: withDefault(option("--seed", integer({ min: 0, metavar: "N" }), { description: message`Bootstrap seed: the same records and seed give the same intervals.` }), 0),
  json: option("--json", { description: message`Print the comparison as one JSON object.` }),
}), {
  brief: message`B against A: per bucket and metric, the ratio B/A with a paired bootstrap CI over rounds.`,
  description: message`Both must be single-mode serve_benchmark records (ik bench serve --rounds R) that asked the same requests: their identity.workload.request_set hashes must agree, else compare refuses and names what differs (exit 65). Rounds are paired by index; each round's value is the median over its ok requests in the bucket; the ratio is median(B) / median(A) over the paired rounds, with a t-scaled paired bootstrap 95% CI on the log scale. Incomplete (interrupted) records are refused unless --allow-incomplete.`,
});

/** The parsed flags of `ik compare`. */
export type CompareFlags = InferValue<typeof compareCommand>;

/** Runs `ik compare`. */
export async function runCompare(ctx: CommandContext, f: CompareFlags): Promise<number> {
  const rt = ctx.runtime;
  const root = storeRoot((n) => rt.env(n), rt.cwd());
  const a = await loadRecordRef(f.a, root, rt.cwd(), "compare A");
  const b = await loadRecordRef(f.b, root, rt.cwd(), "compare B");
  assertComparable(a.record, b.record, [f.a, f.b], f.allowIncomplete);
  const rowsA = await readRequestRows(a), rowsB = await readRequestRows(b);
  if (!rowsA) throw dataError("compare A", `${f.a} lists no requests artifact`, "compare needs the per-request rows; rerun the benchmark");
  if (!rowsB) throw dataError("compare B", `${f.b} lists no requests artifact`, "compare needs the per-request rows; rerun the benchmark");
  const c = compareRecords({ record: a.record, rows: rowsA }, { record: b.record, rows: rowsB }, { resamples: f.resamples, seed: f.seed });
  const facts: [Record<string, unknown>, Record<string, unknown>] = [sideFacts(a.record), sideFacts(b.record)];
  const notes = differenceNotes(a.record, b.record);
  if (ctx.json) {
    ctx.out(JSON.stringify({ kind: "compare", claim_class: "derived", a: facts[0], b: facts[1], request_set: requestSetOf(a.record), ...c, notes }) + "\n");
  } else {
    ctx.out(renderComparison(c, facts, notes));
  }
  return ExitCode.OK;
}
