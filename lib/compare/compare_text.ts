/**
 * The human form of `ik compare`: who A and B are, one line per bucket × metric with the ratio
 * B / A and its paired 95% CI, then failures and notes. Record text goes through
 * escapeTerminalLine (a record field can hold anything). Pure.
 * @module
 */
import { escapeTerminalLine } from "../report/escape.ts";
import { formatValue } from "../rounds/format.ts";
import type { CompareRow, Comparison } from "./compare_records.ts";

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length));

function side(name: string, f: Record<string, unknown>): string {
  const bits = [f.evidence_id, f.engine, f.engine_version, f.model].filter((x) => x !== null && x !== undefined).map((x) => String(x));
  const label = f.label ? ` (label ${String(f.label)})` : "";
  return `  ${name}  ${escapeTerminalLine(bits.join(" "))}${escapeTerminalLine(label)}${f.complete ? "" : " INCOMPLETE"}`;
}

/**
 * One side's median: `value unit`, `(own N rounds)` where no round pairs, `all failed` where that
 * side answered no request of the bucket.
 */
function medianCell(r: CompareRow, side: "a" | "b", c: Comparison): string {
  const m = side === "a" ? r.a_median : r.b_median;
  if (m === null) {
    const f = c.failures.find((x) => x.bucket === r.bucket);
    const [failed, total] = f ? (side === "a" ? [f.a_failed, f.a_requests] : [f.b_failed, f.b_requests]) : [0, 0];
    return total > 0 && failed === total ? "all failed" : "n/a";
  }
  const rounds = side === "a" ? r.a_rounds : r.b_rounds;
  return `${formatValue(m)} ${r.unit}${r.median_basis === "own rounds" ? ` (own ${rounds} round${rounds === 1 ? "" : "s"})` : ""}`;
}

/**
 * Renders a comparison for a terminal.
 * @param facts {@link sideFacts} of A and B
 * @param notes lines shown under the table
 */
export function renderComparison(c: Comparison, facts: [Record<string, unknown>, Record<string, unknown>], notes: readonly string[]): string {
  const lines = [
    `compare: B / A, paired by round over ${c.rounds.paired.length} round(s) (A has ${c.rounds.a.length}, B ${c.rounds.b.length}); ${c.resamples} resamples, seed ${c.seed}`,
    side("A", facts[0]),
    side("B", facts[1]),
    "",
  ];
  const table = [["bucket", "metric", "A median", "B median", "B/A", "95% CI", "pairs", "reading"]];
  for (const r of c.rows) {
    const ci = r.ratio_ci95[0] === null ? "-" : `${formatValue(r.ratio_ci95[0])} - ${formatValue(r.ratio_ci95[1])}`;
    table.push([
      escapeTerminalLine(r.bucket), r.metric, medianCell(r, "a", c), medianCell(r, "b", c),
      formatValue(r.ratio), ci, String(r.n_pairs), r.reading,
    ]);
  }
  const widths = table[0].map((_, j) => Math.max(...table.map((row) => row[j].length)));
  for (const row of table) lines.push(row.map((cell, j) => (j === row.length - 1 ? cell : pad(cell, widths[j]))).join("  ").trimEnd());
  if (!c.rows.length) lines.push("(no ok request in either record: nothing to compare)");
  if (c.failures.length) {
    lines.push("", "failed requests (left out of the latencies):");
    for (const f of c.failures) lines.push(`  ${escapeTerminalLine(f.bucket)}: A ${f.a_failed}/${f.a_requests}, B ${f.b_failed}/${f.b_requests}`);
  }
  const all = [...notes];
  if (c.rounds.paired.length < 2) all.push("fewer than 2 paired rounds: no interval (run more rounds, e.g. --rounds 3)");
  else if (c.rounds.paired.length < 3) all.push("fewer than 3 paired rounds: no reading, whatever the interval says (run more rounds, e.g. --rounds 5)");
  if (c.rows.some((r) => r.median_basis === "own rounds")) all.push("(own N rounds): no round pairs in that bucket and metric (no round has a value on both sides: one side has no ok request there, or they have values in different rounds): each side's median is over its own rounds, and there is no ratio");
  if (all.length) lines.push("", "notes:", ...all.map((n) => `  - ${escapeTerminalLine(n)}`));
  lines.push("", "B/A < 1: B is lower (better for latencies, worse for tok/s). A ratio's 95% CI is a paired t-scaled bootstrap over rounds on the log scale.");
  return lines.join("\n") + "\n";
}
