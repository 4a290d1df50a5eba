/** Renders selftest checks as a text table (pure: data in, string out). */
import Table from "cli-table3";
import pc from "picocolors";
import type { Check } from "../selftest/checks.ts";

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
