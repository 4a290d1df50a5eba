/**
 * `ik merge DIR...`: joins the slices of one sharded load run (`ik bench serve --shard`) into one
 * measured record and one capacity record, N*, cost, SLO and goodput computed once from all rows.
 * Refuses (65, naming the first difference) slices of different runs, a duplicate or out-of-range
 * shard, a seq seen twice or on the wrong shard, and a missing, killed or interrupted shard unless
 * --allow-partial. --fail-on-slo exits 2 when no level met the SLO.
 * @module
 */
import { resolve } from "node:path";
import { usageError } from "../cli/errors.ts";
import { ExitCode } from "../cli/exit_codes.ts";
import { checkWritable, storeRoot } from "../evidence/mod.ts";
import { checkGroup, findSlices, writeMerged } from "../merge/mod.ts";
import { renderCapacity } from "../report/terminal/capacity_table.ts";
import { renderShardSkew } from "../report/terminal/shard_skew.ts";
import type { CommandContext } from "./context.ts";
import type { MergeFlags } from "./merge_flags.ts";

/** Runs `ik merge`. */
export async function runMerge(ctx: CommandContext, f: MergeFlags): Promise<number> {
  const rt = ctx.runtime;
  if (f.group !== undefined && !f.group.trim()) throw usageError("--group", "is empty", "give the group id the slices carry, e.g. --group 1796140800000-4711.0");
  const root = storeRoot((n) => rt.env(n), rt.cwd());
  await checkWritable([root]);
  const found = await findSlices(f.dirs.map((d) => resolve(rt.cwd(), d)));
  const group = checkGroup(found, { group: f.group, allowPartial: f.allowPartial });
  const out = await writeMerged(group, root, { allow_partial: f.allowPartial, fail_on_slo: f.failOnSlo, ...(f.group !== undefined ? { group: f.group } : {}) });
  if (ctx.json) ctx.out(JSON.stringify(out.capacity) + "\n");
  else ctx.out(renderCapacity(out.capacity, out.measured) + renderShardSkew(out.measured));
  if (out.partial) ctx.err(`ik: merge: PARTIAL: ${group.missing.length + group.killed.length} shard(s) absent, ${group.interrupted.length} interrupted; the records ${out.measured.evidence_id} and ${out.capacity.evidence_id} are complete: false\n`);
  const star = (out.capacity.data as Record<string, unknown>)[out.starKey];
  return f.failOnSlo && (star === null || star === undefined) ? ExitCode.SLO_NOT_MET : ExitCode.OK;
}
