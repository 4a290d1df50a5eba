/** Renders selftest checks as a text table (pure: data in, string out). */
import Table from "cli-table3";
import pc from "picocolors";
import type { Check } from "../../selftest/checks.ts";

/** The checks as an aligned table, with the verdict column coloured when `color` is set. */
export function renderChecks(checks: Check[], color: boolean): string {
  const t = new Table({
    head: ["group", "check", "measured", "expected (tolerance)", "verdict"],
    style: { head: [], border: [], compact: true },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
  const paint = (s: Check["status"]) =>
    s === "PASS" ? pc.green(s) : s === "FAIL" ? pc.red(s) : s === "BUSY" ? pc.yellow(s) : pc.dim(s);
  for (const c of checks) {
    t.push([c.group, c.name, c.measured, c.expected, color ? paint(c.status) : c.status]);
  }
  return t.toString();
}

/** One line per group, in first-seen order: how many checks passed, failed, were inconclusive or reported. */
export function groupSummary(checks: Check[]): string {
  const groups = new Map<string, Check[]>();
  for (const c of checks) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
  const width = Math.max(0, ...[...groups.keys()].map((g) => g.length));
  const lines: string[] = [];
  for (const [g, cs] of groups) {
    const n = (s: Check["status"]) => cs.filter((c) => c.status === s).length;
    const parts = [`${n("PASS")} passed`];
    if (n("FAIL")) parts.push(`${n("FAIL")} FAILED`);
    if (n("BUSY")) parts.push(`${n("BUSY")} inconclusive`);
    if (n("INFO")) parts.push(`${n("INFO")} reported`);
    lines.push(`  ${g.padEnd(width)}  ${parts.join(", ")}`);
  }
  return lines.join("\n");
}

/**
 * The default human view: a line per group, then only the rows that need a look (FAIL, BUSY) as a
 * table; `verbose` gives every row instead.
 */
export function renderSelftest(checks: Check[], color: boolean, verbose: boolean): string {
  if (verbose) return renderChecks(checks, color);
  const flagged = checks.filter((c) => c.status === "FAIL" || c.status === "BUSY");
  const out = [groupSummary(checks)];
  if (flagged.length) out.push(renderChecks(flagged, color));
  return out.join("\n");
}

/** What to do after a verdict that is not PASS, or "" after a PASS. */
export function nextStepLine(checks: Check[]): string {
  const v = overallVerdict(checks);
  if (v === "FAIL") {
    return "selftest: a FAIL means ik measured the mock wrong on this host: do not publish numbers from this build here; " +
      "rerun with --verbose to see every check, and report it with `ik --version` and the output of `ik selftest --json`";
  }
  if (v === "BUSY") {
    return "selftest: the mock itself ran late, so the client could not be judged: rerun when the host is quieter " +
      "(stop the engine, or pin ik to a free core with taskset)";
  }
  return "";
}

/** The overall verdict: FAIL if any check failed (or none ran), else BUSY if any was inconclusive, else PASS. */
export function overallVerdict(checks: Check[]): "PASS" | "FAIL" | "BUSY" {
  if (checks.length === 0 || checks.some((c) => c.status === "FAIL")) return "FAIL";
  return checks.some((c) => c.status === "BUSY") ? "BUSY" : "PASS";
}

/** Counts per status and the one-line verdict. */
export function verdictLine(checks: Check[], seconds: number): string {
  const n = (s: Check["status"]) => checks.filter((c) => c.status === s).length;
  const v = overallVerdict(checks);
  const busy = n("BUSY")
    ? `, ${n("BUSY")} inconclusive (host too busy to judge timing: rerun on a quiet machine)`
    : "";
  const word = v === "BUSY" ? "INCONCLUSIVE" : v;
  return `selftest: ${word}: ${n("PASS")} passed, ${n("FAIL")} failed${busy}, ${n("INFO")} reported, in ${
    seconds.toFixed(1)
  } s`;
}
