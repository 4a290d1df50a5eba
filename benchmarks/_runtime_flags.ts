/**
 * The Bun flags a compiled ik runs with (built in with `--compile-exec-argv`; `--version --json`
 * reports them as runtime_flags): what a bench needs to run its own client, or compile its own
 * floor, the way dist/ik runs.
 * @module
 */
import { execFileSync } from "node:child_process";

/** The runtime flags of the ik binary at `bin` (`[]` for none). */
export function runtimeFlagsOf(bin: string): string[] {
  const out = execFileSync(bin, ["--version", "--json"], { encoding: "utf8" });
  return String((JSON.parse(out) as { runtime_flags?: string }).runtime_flags ?? "").split(" ").filter(Boolean);
}
