/** The human form of a load run: the capacity claim, then one row per level, then the limitations (pure). */
import Table from "cli-table3";
import { escapeTerminalLine } from "../escape.ts";

const f = (v: unknown, nd = 1) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(nd) : "-");

/**
 * A level's SLO column: ok / FAIL / "not judged" (interrupted, nothing sent) / "-" (no SLO), with
 * "not achieved" where the level did not send its schedule's rate (no N* claim at it).
 */
export function sloCell(sloOk: unknown, notJudged: string | null, notAchieved: string | null): string {
  const verdict = notJudged ? "not judged" : sloOk === true ? "ok" : sloOk === false ? "FAIL" : "-";
  return notAchieved && !notJudged ? `${verdict} (not achieved)` : verdict;
}

/** Renders the capacity record and its measurement's per-level figures. */
export function renderCapacity(capacity: Record<string, unknown>, measured: Record<string, unknown>): string {
  const levels = ((measured.data as { levels?: unknown[] }).levels ?? []) as {
    name: string; target_rate_rps: number | null; offered_rate_rps: number | null; client_limited: string | null;
    not_judged?: string | null; not_achieved?: string | null; summary: Record<string, any>; server: { means?: Record<string, number | null> } | null;
  }[];
  const t = new Table({
    head: ["level", "rate target/offered", "ok/failed", "TTFT p50/p95 ms", "TTFT p95 fail-adj", "TPOT p95 ms", "ITL p99 ms", "e2e p95 ms", "tok/s/GPU", "goodput rps", "in flight", "server run/wait", "SLO"],
    style: { head: [], border: [], compact: true },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
  for (const l of levels) {
    const s = l.summary;
    const fa = s.ttft_ms_failure_adjusted?.p95;
    const adj = fa ? (fa.censored ? "> max" : f(fa.value)) : "-";
    const srv = l.server?.means ? `${f(l.server.means.running)}/${f(l.server.means.waiting)}` : "n/a";
    t.push([
      escapeTerminalLine(l.name) + (l.client_limited ? " (client?)" : ""),
      `${f(l.target_rate_rps, 2)}/${f(l.offered_rate_rps, 2)}`,
      `${s.n_ok}/${s.n_failed}`,
      `${f(s.ttft_ms.p50)}/${f(s.ttft_ms.p95)}`,
      adj,
      f(s.tpot_ms.p95, 2),
      f(s.itl_ms.p99, 2),
      f(s.e2e_ms.p95, 0),
      f(s.output_tok_s_per_gpu),
      f(s.goodput_rps, 2),
      f(s.mean_inflight, 2),
      srv,
      sloCell(s.slo_ok, l.not_judged ?? null, l.not_achieved ?? null),
    ]);
  }
  const lines = [escapeTerminalLine(String(capacity.summary)), t.toString()];
  const lim = [...((capacity.limitations as string[]) ?? []), ...((measured.limitations as string[]) ?? [])];
  if (lim.length) lines.push("limitations:", ...lim.map((l) => `  - ${escapeTerminalLine(l)}`));
  const miss = [...new Set([...((capacity.missing as string[]) ?? []), ...((measured.missing as string[]) ?? [])])];
  if (miss.length) lines.push("missing:", ...miss.map((l) => `  - ${escapeTerminalLine(l)}`));
  lines.push(`records: ${measured.evidence_id} (measured), ${capacity.evidence_id} (capacity)`);
  return lines.join("\n") + "\n";
}
