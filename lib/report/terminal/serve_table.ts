/** The human form of a single-mode serve_benchmark record: a per-bucket table with CIs, then the limitations (pure). */
import Table from "cli-table3";
import { escapeTerminalLine } from "../escape.ts";

interface Figure {
  median: number | null;
  p95: number | null;
  p99?: number | null;
  ci95_median: [number, number] | null;
  n: number;
  rounds: number;
}

function cell(f: Figure | null | undefined, nd: number): string {
  if (!f || f.median === null) return "-";
  const ci = f.ci95_median ? ` [${f.ci95_median[0].toFixed(nd)}, ${f.ci95_median[1].toFixed(nd)}]` : "";
  return `${f.median.toFixed(nd)}${ci}`;
}

function p95(f: Figure | null | undefined, nd: number): string {
  return !f || f.p95 === null ? "-" : f.p95.toFixed(nd);
}

/** p95, and p99 after a slash where the bucket has one (20 or more requests). */
function tail(f: Figure | null | undefined, nd: number): string {
  const base = p95(f, nd);
  return f && typeof f.p99 === "number" ? `${base}/${f.p99.toFixed(nd)}` : base;
}

/**
 * Renders the record for a person: summary line, per-bucket medians with their 95% CIs (rounds
 * resampled), p95 (and p99 and requests/s where a bucket has 20 or more requests), then every
 * limitation and missing fact.
 */
export function renderSingleRecord(rec: Record<string, unknown>, where: string): string {
  const data = rec.data as { buckets: Record<string, Record<string, unknown>> };
  const t = new Table({
    head: ["bucket", "n", "TTFT ms median [95% CI]", "p95/p99", "TPOT ms median [95% CI]", "p95/p99", "decode tok/s median [95% CI]", "e2e ms median", "req/s"],
    style: { head: [], border: [], compact: true },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
  for (const [bucket, row] of Object.entries(data.buckets)) {
    const g = (k: string) => row[k] as Figure | null;
    const rps = typeof row.requests_per_s === "number" ? row.requests_per_s.toFixed(2) : "-";
    t.push([escapeTerminalLine(bucket), String(row.n_requests ?? 0), cell(g("ttft_ms"), 1), tail(g("ttft_ms"), 1), cell(g("tpot_ms"), 2), tail(g("tpot_ms"), 2), cell(g("decode_tok_s"), 1), cell(g("e2e_ms"), 0), rps]);
  }
  const lines = [escapeTerminalLine(String(rec.summary)), t.toString()];
  const lim = (rec.limitations as string[]) ?? [];
  if (lim.length) lines.push("limitations:", ...lim.map((l) => `  - ${escapeTerminalLine(l)}`));
  const miss = (rec.missing as string[]) ?? [];
  if (miss.length) lines.push("missing:", ...miss.map((l) => `  - ${escapeTerminalLine(l)}`));
  lines.push(`record: ${rec.evidence_id}${rec.complete === false ? " (INCOMPLETE)" : ""} in ${where}`);
  return lines.join("\n") + "\n";
}
