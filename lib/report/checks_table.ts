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
  for (const c of checks) {
    const v = !color ? c.status : c.status === "PASS" ? pc.green(c.status) : c.status === "FAIL" ? pc.red(c.status) : pc.dim(c.status);
    t.push([c.group, c.name, c.measured, c.expected, v]);
  }
  return t.toString();
}

/** Counts per status and the one-line verdict. */
export function verdictLine(checks: Check[], seconds: number): string {
  const n = (s: Check["status"]) => checks.filter((c) => c.status === s).length;
  const failed = n("FAIL");
  return `selftest: ${failed ? "FAIL" : "PASS"}: ${n("PASS")} passed, ${failed} failed, ${n("INFO")} reported, in ${seconds.toFixed(1)} s`;
}
