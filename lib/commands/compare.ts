/**
 * `ik compare A B`: B against A, two single-mode serve_benchmark records that asked the same
 * requests. Per bucket and metric, the ratio of medians B / A with a paired bootstrap CI over
 * rounds. Refuses (exit 65, naming what differs) records whose request_set differs, and
 * incomplete records unless --allow-incomplete.
 * @module
 */
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
  roundOrderNote,
  sideFacts,
} from "../compare/mod.ts";
import { storeRoot } from "../evidence/mod.ts";
import type { CommandContext } from "./context.ts";
import type { CompareFlags } from "./compare_flags.ts";

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
  if (c.rounds.paired.length === 0 && c.rounds.a.length && c.rounds.b.length) {
    const span = (r: number[]) => (r.length === 1 ? `${r[0]}` : `${r[0]}-${r[r.length - 1]}`);
    throw dataError(
      "compare",
      `${f.a} and ${f.b} have no round index in common (A rounds ${span(c.rounds.a)}, B rounds ${span(c.rounds.b)}); compare pairs rounds by index`,
      "rerun one with bench serve --first-round set to the other's first round, or run them interleaved with ik bench rounds",
    );
  }
  const facts: [Record<string, unknown>, Record<string, unknown>] = [sideFacts(a.record), sideFacts(b.record)];
  const notes = [...differenceNotes(a.record, b.record), ...c.cautions];
  const order = roundOrderNote(a.record, b.record, c.rounds.paired);
  if (order) notes.push(order);
  if (ctx.json) {
    ctx.out(JSON.stringify({ kind: "compare", claim_class: "derived", a: facts[0], b: facts[1], request_set: requestSetOf(a.record), ...c, notes }) + "\n");
  } else {
    ctx.out(renderComparison(c, facts, notes));
  }
  return ExitCode.OK;
}
