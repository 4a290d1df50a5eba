/**
 * The host CPU every benchmark names beside its figures: the model from /proc/cpuinfo (x86
 * `model name`, Arm `Hardware`) and the count of logical CPUs. One definition for every
 * bench script (Bun, Deno and Node alike).
 * @module
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";

/** `AMD EPYC 7B13 (2 logical CPUs)`, or the runtime's own CPU model where /proc is absent. */
export function cpuName(): string {
  let text = "";
  try {
    text = readFileSync("/proc/cpuinfo", "utf8");
  } catch { /* not Linux: os.cpus() below */ }
  const m = text.match(/^model name\s*:\s*(.+)$/m) ?? text.match(/^Hardware\s*:\s*(.+)$/m);
  const n = (text.match(/^processor\s*:/gm) ?? []).length || cpus().length;
  return `${m ? m[1].trim() : cpus()[0]?.model ?? "unknown"} (${n} logical CPUs)`;
}
