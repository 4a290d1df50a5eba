/**
 * The human summary of a shard's slice record: what it sent per level and its send lag, never a
 * percentile that could be read as a result (a slice is a 1/S sample).
 * @module
 */

/** A few lines naming the slice, its group, its levels and where it was stored. */
export function renderSlice(slice: Record<string, unknown>, dir: string): string {
  const d = slice.data as Record<string, unknown>;
  const shard = d.shard as { k: number; s: number };
  const group = d.group as { id: string };
  const lines = [`slice ${shard.k}/${shard.s} of group ${group.id}: ${slice.evidence_id}`];
  for (const l of d.levels as Record<string, unknown>[]) {
    const s = l.summary as { n_failed: number; send_lag_ms: { p99: number | null } };
    const lag = s.send_lag_ms.p99;
    lines.push(`  ${String(l.name)}: sent ${l.sent}${l.planned_all != null ? ` of ${l.planned_all} in the schedule` : ""}, ${s.n_failed} failed, send lag p99 ${lag === null ? "n/a" : `${lag.toFixed(2)} ms`}`);
  }
  for (const lim of (slice.limitations as string[]).slice(0, 2)) lines.push(`  note: ${lim}`);
  lines.push(`  stored in ${dir}; merge every shard's slice with: ik merge DIR...`);
  return lines.join("\n") + "\n";
}
