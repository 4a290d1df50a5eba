/**
 * How much of one CPU this process gets right now: spin for a moment and compare the CPU time
 * the process was given with the wall time that passed. On an idle host it is ≈ 1; on a host
 * whose cores other work keeps busy it drops (2 cores at load 6 give ≈ 0.35). Used to tell "the
 * client is slow" from "the host is too busy to say".
 * @module
 */
import type { Runtime } from "../runtime/mod.ts";

/** Share of a CPU below which a host counts as too busy to judge client lag. */
export const BUSY_CPU_SHARE = 0.8;

/**
 * Spins for `ms` of wall time (blocking the event loop: call it between measurements only).
 * @returns CPU time received / wall time, in [0, ~1]
 */
export function cpuShare(rt: Runtime, ms = 100): number {
  const c0 = rt.cpuUsage();
  const t0 = performance.now();
  let x = 0;
  while (performance.now() - t0 < ms) x += Math.sqrt(x + 1);
  const wallUs = (performance.now() - t0) * 1000;
  const c1 = rt.cpuUsage();
  const cpuUs = c1.userUs - c0.userUs + c1.systemUs - c0.systemUs;
  return x >= 0 ? Math.min(1, cpuUs / wallUs) : 0;
}

/**
 * The best of a few back-to-back probes: a host starved for as long as the probes last (other work
 * on its cores) reads low in each, while one short dip (a hypervisor's steal, a collector pass)
 * lowers only one. For turning a FAIL into BUSY, where a false "busy" would hide a real fault.
 * @returns the highest share of `probes` probes of `ms` each
 */
export function steadyCpuShare(rt: Runtime, probes = 3, ms = 100): number {
  let best = 0;
  for (let i = 0; i < probes; i++) best = Math.max(best, cpuShare(rt, ms));
  return best;
}
