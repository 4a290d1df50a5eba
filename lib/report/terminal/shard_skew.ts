/**
 * The per-shard lines of a merged record: send lag on its own clock and against the shared wall
 * timetable, and its offset from the other shards (a shard more than 5 ms off is marked).
 * @module
 */

const f = (x: number | null | undefined, nd = 2) => (x === null || x === undefined ? "n/a" : x.toFixed(nd));

/** A short table of the merged record's shards. */
export function renderShardSkew(measured: Record<string, unknown>): string {
  const merge = (measured.data as Record<string, unknown>).merge as { slices: Record<string, unknown>[]; group: string } | undefined;
  if (!merge) return "";
  const lines = [`shards of group ${merge.group} (send lag ms: own clock p50/p99 | wall timetable p50/p99 | median vs all shards):`];
  for (const s of merge.slices) {
    const own = s.send_lag_ms as { p50: number | null; p99: number | null }, tt = s.timetable_lag_ms as { p50: number | null; p99: number | null };
    const off = s.median_offset_ms as number | null;
    const flag = off !== null && Math.abs(off) > 5 ? "  <- OFF THE TIMETABLE" : (own.p99 ?? 0) > 5 ? "  <- CLIENT-LIMITED" : "";
    lines.push(`  ${s.shard}: ${s.sent} sent; ${f(own.p50)}/${f(own.p99)} | ${f(tt.p50)}/${f(tt.p99)} | ${off === null ? "n/a" : `${off >= 0 ? "+" : ""}${off.toFixed(2)}`}${flag}`);
  }
  return lines.join("\n") + "\n";
}
