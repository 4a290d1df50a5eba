/**
 * summary.md of a rounds run (seed 001's Markdown report): the design, the adaptive stop, the
 * comparison table with its [FAILURES], [HARD GATE] and [SELF-REPORTED CONFIG] markers, failed
 * requests, the resolved configuration per engine and the failed cells. Pure: data in, text out.
 * @module
 */
import { scrubValue } from "../evidence/mod.ts";
import { formatValue as fmt, sortedJson, tableCell } from "./format.ts";
import type { RoundsSummary } from "./summary.ts";

/** The parts of plan.json the report reads. */
export interface ReportPlan {
  mode: "single" | "load";
  rounds: number;
  engines: readonly unknown[];
  design: { design: string; period: number; balanced: boolean };
  prompts: { name: string; sha256: string; n: number };
  adaptive?: { max_rounds: number; met?: boolean; rule: string } | null;
  stopped_early?: { round: number } | null;
  /** A run stopped short (interrupted, a failed write): what ran (run.ts ranSoFar). */
  ran?: { cells: number; whole_rounds: number; balanced: boolean } | null;
  interrupted?: { after_cells: number; note: string } | null;
  stopped_on_write_failure?: { note: string } | null;
  extra_body?: { value: unknown; source: string } | null;
  load_schedule?: { shared?: boolean; ref_e2e_ms?: number | null; source?: string | null } | null;
}

/** One engine's resolved-config summary over its rounds. */
export interface ReportResolved {
  /** RESOLVED, SELF_REPORTED or UNPROVEN (the weakest over rounds). */
  status: string;
  version?: string | null;
  /** Warnings (the most in one round). */
  warnings: number;
  unknown_settings: readonly string[];
  /** Hard-gate violations (an `expect` value the config contradicts). */
  violations: readonly string[];
  /** Settings only the engine's own line reported. */
  self_reported?: readonly string[];
}

/** The parts of a cell the failed-cells table reads. */
export interface ReportCell {
  round: number;
  label: string;
  status: string | null;
  detail?: string | null;
  ready?: { last?: unknown } | null;
  serve?: { returncode?: number | null } | null;
}

function header(plan: ReportPlan): string[] {
  const ran = plan.ran;
  const lines = [
    ran
      ? `# bench rounds: ${plan.mode} mode, STOPPED SHORT: ${ran.whole_rounds} of ${plan.rounds} rounds whole (${ran.cells} cells), ${plan.engines.length} engines`
      : `# bench rounds: ${plan.mode} mode, ${plan.rounds} rounds, ${plan.engines.length} engines`,
    "",
    `Order: ${plan.design.design} design, period ${plan.design.period}, balanced: ` +
    (ran ? `${ran.balanced ? "yes" : "NO"} over the ${ran.whole_rounds} whole round(s) that ran (the plan's ${plan.rounds}: ${plan.design.balanced ? "yes" : "NO"}). ` : `${plan.design.balanced ? "yes" : "NO"}. `) +
    `Prompt set ${tableCell(plan.prompts.name)} (sha256 ${plan.prompts.sha256.slice(0, 12)}..., n=${plan.prompts.n}).`, "",
  ];
  if (plan.interrupted) lines.push(`Interrupted after ${plan.interrupted.after_cells} cell(s): ${plan.interrupted.note}.`, "");
  if (plan.stopped_on_write_failure) lines.push(`Stopped on a failed write: ${plan.stopped_on_write_failure.note}.`, "");
  const adaptive = plan.adaptive;
  if (adaptive) {
    const how = plan.stopped_early
      ? `stopped early after round ${plan.stopped_early.round} of at most ${adaptive.max_rounds}: the CI target was met`
      : `ran all ${plan.rounds} rounds; the CI target was ${adaptive.met ? "met" : "NOT met"}`;
    lines.push(`Adaptive stop: ${how}. Rule: ${adaptive.rule}.`, "");
  }
  if (plan.extra_body) {
    // As plan.json stores it: a secret-looking key's value (nested too) shows as ***.
    lines.push(`Every request carried --extra-body ${sortedJson(scrubValue(plan.extra_body.value))} (${plan.extra_body.source}).`, "");
  }
  if (plan.mode === "load") {
    const sched = plan.load_schedule ?? {};
    const same = sched.shared ? "the same for every engine" : "NOT the same for every engine";
    const ref = sched.ref_e2e_ms ? ` (--ref-e2e-ms ${fmt(sched.ref_e2e_ms)} ms)` : "";
    lines.push(
      "Medians and CIs are [derived]: each round's value comes from bench serve's capacity record (N* and the " +
        "values at N*, derived from the client-side timings of the load levels); ratios are [derived].", "",
      `Arrival schedule: ${same}${ref}; ${sched.source || "unknown"}.`, "",
    );
  } else {
    lines.push("Medians and CIs are [observed] (client-side timer in `bench serve`); ratios are [derived].", "");
  }
  return lines;
}

function comparison(summary: RoundsSummary, resolved: Readonly<Record<string, ReportResolved>>, cls: string): string[] {
  const lines = [
    "An engine marked [FAILURES] had failed requests in that bucket: its latencies cover only the requests it " +
    "answered, so it is never named best there and gets no ratio. A median's 95% CI needs at least 3 rounds " +
    "(with 2, a t interval has one degree of freedom): '-' below that. Ratios are to the reference (the best " +
    "median); an engine is named (best) only where every other ranked engine's ratio CI excludes 1 with at least 3 " +
    "round pairs, else the reading says \"no clear difference\". An engine marked [HARD GATE] ran with a config the " +
    "manifest's expect contradicts: shown, never ranked. ≥: a lower bound (an N* at the top of the grid).", "",
    `| engine | bucket | metric | median [${cls}] | 95% CI | rounds | ratio to reference [derived] | ratio 95% CI | reading |`,
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of summary.rows) {
    const info = resolved[r.engine];
    let marks = r.engine === r.best ? " (best)" : r.engine === r.reference ? " (reference)" : "";
    if (r.failed_requests) marks += " [FAILURES]";
    if (info?.violations.length) marks += " [HARD GATE]";
    if (info?.status === "SELF_REPORTED") marks += " [SELF-REPORTED CONFIG]";
    const unit = r.unit ? ` ${tableCell(r.unit)}` : "";
    const ratioCi = r.engine === r.reference || r.ratio_to_best === null ? "-" : `${fmt(r.ratio_ci95[0])} - ${fmt(r.ratio_ci95[1])}`;
    const reading = [r.verdict, r.n_star_note].filter(Boolean).join("; ") || "-";
    lines.push(
      `| ${tableCell(r.engine)}${marks} | ${tableCell(r.bucket)} | ${tableCell(r.metric)} | ${r.lower_bound ? "≥ " : ""}${fmt(r.median)}${unit} | ` +
        `${fmt(r.ci95[0])} - ${fmt(r.ci95[1])} | ${r.n} | ${fmt(r.ratio_to_best)} | ${ratioCi} | ${tableCell(reading)} |`,
    );
  }
  if (!summary.rows.length) lines.push("| (no successful rounds) | | | | | | | | |");
  if (summary.failures.length) {
    lines.push("", "## Failed requests", "", "| engine | bucket | failed | requests | rounds |", "|---|---|---|---|---|");
    for (const f of summary.failures) {
      lines.push(`| ${tableCell(f.engine)} | ${tableCell(f.bucket)} | ${fmt(f.failed_requests)} | ${fmt(f.requests)} | ${f.rounds} |`);
    }
  }
  return lines;
}

function resolvedTable(resolved: Readonly<Record<string, ReportResolved>>): string[] {
  const lines = [
    "", "## Resolved configuration (from server logs)", "",
    "SELF_REPORTED: the settings come only from the engine process's own `ik_resolved_config` line, which " +
    "nothing verifies; for vllm, sglang, llamacpp and trtllm such a line is ignored.", "",
    "| engine | status | version | warnings | unknown settings | hard-gate violations | self-reported (unverified) |",
    "|---|---|---|---|---|---|---|",
  ];
  const list = (xs: readonly string[] | undefined, sep: string) => tableCell((xs ?? []).join(sep)) || "-";
  for (const [label, info] of Object.entries(resolved)) {
    lines.push(
      `| ${tableCell(label)} | ${tableCell(info.status)} | ${tableCell(info.version || "n/a")} | ${info.warnings} | ` +
        `${list(info.unknown_settings, ", ")} | ${list(info.violations, "; ")} | ${list(info.self_reported, ", ")} |`,
    );
  }
  return lines;
}

function failedCells(cells: readonly ReportCell[]): string[] {
  const failed = cells.filter((c) => c.status !== "ok");
  if (!failed.length) return [];
  const lines = ["", "## Failed cells", "", "| round | engine | status | detail |", "|---|---|---|---|"];
  for (const c of failed) {
    const detail = c.detail || c.ready?.last || c.serve?.returncode;
    const text = detail === undefined || detail === null || detail === "" ? "-" : String(detail);
    lines.push(`| ${c.round} | ${tableCell(c.label)} | ${tableCell(c.status ?? "not run")} | ${tableCell(text.slice(0, 120))} |`);
  }
  return lines;
}

/**
 * The Markdown report of a rounds run, ending with a newline.
 * @param summary from summarize()
 * @param plan plan.json (mode, rounds, design, prompts, adaptive, extra body, load schedule)
 * @param cells every cell, for the failed-cells table
 * @param resolved per engine label, its resolved-config summary
 */
export function roundsMarkdown(summary: RoundsSummary, plan: ReportPlan, cells: readonly ReportCell[], resolved: Readonly<Record<string, ReportResolved>>): string {
  const cls = plan.mode === "load" ? "derived" : "observed";
  const lines = [...header(plan), ...comparison(summary, resolved, cls), ...resolvedTable(resolved), ...failedCells(cells)];
  return lines.join("\n") + "\n";
}
