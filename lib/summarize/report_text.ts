/**
 * The human report of a unit (seed 003's layout): the configuration block, one README table per
 * (dataset, pass), the A/B spread, diagnostics, the c1 MTP tables per Spec-Bench category with
 * MT-bench pooled, FLAGS and the DECISION line. Pure: summary in, text out.
 * @module
 */
import { escapeTerminalLine } from "../report/escape.ts";
import { fmt, left, right } from "./py_format.ts";
import type { CategoryStats } from "./specbench.ts";
import type { UnitSummary } from "./unit.ts";

const HEADLINE = "| Concurrency | Requests | Output tok/s | Req/s | TTFT p50 / p99 (ms) | TPOT p50 / p99 (ms) | " +
  "Per-stream tok/s (1000/TPOT p50) | E2E p50 (s) | tau | depth |";
/** The headline of a table whose every cell is an `ik export`ed rate level: its first column is the rate. */
const HEADLINE_RATE = HEADLINE.replace("| Concurrency |", "| Rate (req/s) |");

function headlineTables(s: UnitSummary, out: string[]): void {
  const passes = [...new Set(s.runs.map((r) => r.pass))];
  for (const ds of new Set(s.runs.map((r) => r.dataset))) {
    for (const ps of passes) {
      const rs = s.runs.filter((r) => r.dataset === ds && r.pass === ps);
      if (!rs.length) continue;
      out.push("", `== ${ds}, pass ${ps} ==`, rs.every((r) => r.conc_is_rate) ? HEADLINE_RATE : HEADLINE, "|---|---|---|---|---|---|---|---|---|---|");
      for (const r of rs) {
        if (!r.has_result) {
          out.push(`| ${r.conc} | (no result; rc ${r.rc || "None"}) | | | | | | | | |`);
          continue;
        }
        out.push(`| ${r.conc} | ${r.completed ?? "-"} | ${fmt(r.out_tps, 1)} | ${fmt(r.req_s, 2)} | ${fmt(r.ttft_p50, 0)} / ${fmt(r.ttft_p99, 0)} | ` +
          `${fmt(r.tpot_p50, 2)} / ${fmt(r.tpot_p99, 2)} | ${fmt(r.per_stream, 0)} | ${fmt(r.e2el_p50_s, 2)} | ${fmt(r.tau, 2)} | ${fmt(r.depth, 2)} |`);
      }
    }
  }
}

function spreadTables(s: UnitSummary, out: string[]): void {
  const sp = s.spread;
  if (!sp) return;
  for (const d of sp.datasets) {
    out.push("", `== ${d.dataset}: pass ${sp.passA} vs ${sp.passB} (spread = |A - B| / mean) ==`);
    out.push(`${right("conc", 4)} ${right("tok/s A", 8)} ${right("B", 8)} ${right("mean", 8)} ${right("spread", 7)} ${right("TPOT50 A", 8)} ${right("B", 6)} ` +
      `${right("TTFT50 A", 8)} ${right("B", 6)} ${right("tau A", 6)} ${right("B", 5)}`);
    for (const l of d.lines) {
      if (l.spread_pct === null || !l.a || !l.b) {
        out.push(`${right(l.conc, 4)} (pass ${l.a ? sp.passB : sp.passA} missing)`);
        continue;
      }
      out.push(`${right(l.conc, 4)} ${fmt(l.a.out_tps, 1, 8)} ${fmt(l.b.out_tps, 1, 8)} ${fmt(l.mean, 1, 8)} ${fmt(l.spread_pct, 2, 6)}% ` +
        `${fmt(l.a.tpot_p50, 2, 8)} ${fmt(l.b.tpot_p50, 2, 6)} ${fmt(l.a.ttft_p50, 0, 8)} ${fmt(l.b.ttft_p50, 0, 6)} ${fmt(l.a.tau, 2, 6)} ${fmt(l.b.tau, 2, 5)}`);
    }
  }
}

function diagnostics(s: UnitSummary, out: string[]): void {
  const w = Math.max(22, ...s.runs.map((r) => r.tag.length));
  out.push("", "== diagnostics (not for the README) ==");
  out.push(`${left("tag", w)} ${right("dur s", 6)} ${right("mean in", 7)} ${right("out", 5)} ${right("tot tok/s", 9)} ${right("step p50", 8)} ${right("tau", 5)} ` +
    `${right("tau cli", 7)} ${right("acc/prop", 8)} ${right("cached %", 8)} ${right("hits", 4)} ${right("lines", 5)}`);
  for (const r of s.runs) {
    if (!r.has_result) continue;
    out.push(`${left(r.tag, w)} ${fmt(r.duration, 0, 6)} ${fmt(r.mean_in, 0, 7)} ${fmt(r.mean_out, 0, 5)} ${fmt(r.total_tps, 1, 9)} ${fmt(r.itl_p50, 2, 8)} ` +
      `${fmt(r.tau, 2, 5)} ${fmt(r.tau_client, 2, 7)} ${fmt(r.acc_prop, 3, 8)} ${fmt(r.cached_share === null ? null : r.cached_share * 100, 2, 8)} ` +
      `${right(r.cached_n, 4)} ${right(r.mtp_n, 5)}`);
  }
}

function categoryLine(name: string, b: CategoryStats): string {
  return `${left(name, 16)} ${right(b.n, 3)} ${fmt(b.tau, 2, 5)} ${fmt(b.acc_prop, 3, 8)} ${right(b.gen, 7)}`;
}

function categoryTablesText(s: UnitSummary, out: string[]): void {
  for (const t of s.categories) {
    out.push("", `== ${t.tag}: MTP per Spec-Bench category (mapping ${t.verified ? "verified" : "UNVERIFIED"}) ==`);
    out.push(`${left("category", 16)} ${right("n", 3)} ${right("tau", 5)} ${right("acc/prop", 8)} ${right("gen", 7)}`);
    for (const [cat, b] of Object.entries(t.by)) out.push(categoryLine(cat, b));
    out.push("-- task groups (MT-bench pooled) --");
    for (const [g, b] of Object.entries(t.groups)) out.push(categoryLine(g, b));
  }
}

/** Renders the report (every line escaped for the terminal: tags and log text are input). */
export function renderUnit(s: UnitSummary): string {
  const out: string[] = [];
  if (s.config.length) {
    out.push("== configuration (first boot; FLAGS list any boot that differs) ==");
    for (const [k, v] of s.config) out.push(`  ${left(k, 14)} ${v}`);
  }
  headlineTables(s, out);
  spreadTables(s, out);
  diagnostics(s, out);
  categoryTablesText(s, out);
  out.push("", `FLAGS: ${s.flags.length ? "" : "none"}`.trimEnd());
  for (const f of s.flags) out.push(`  - ${f}`);
  if (s.decision) out.push("", `DECISION: ${s.decision.text}`);
  while (out[0] === "") out.shift();
  return out.map((l) => escapeTerminalLine(l)).join("\n") + "\n";
}
