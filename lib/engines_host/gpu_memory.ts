/**
 * GPU memory before and after an engine (issue 10, cell step 9): after an engine stops, ik waits
 * until every GPU's used memory is back within a tolerance of the baseline taken before the
 * launch, so the next engine does not start beside a dying one's allocations. The numbers come
 * from `nvidia-smi --query-gpu=memory.used,name --format=csv,noheader,nounits`, run through an
 * injected {@link ExecFn}. With no nvidia-smi (or one that fails) the wait is skipped with a note:
 * never a failure. The clock and sleep are injected too.
 * @module
 */
import type { ExecFn } from "../gpu/nvidia_smi.ts";

/** The query: one `used, name` line per GPU, MiB, no header. */
export const GPU_MEMORY_QUERY = ["nvidia-smi", "--query-gpu=memory.used,name", "--format=csv,noheader,nounits"];
/** Default tolerance over the baseline (MiB). */
export const GPU_MEMORY_TOLERANCE_MIB = 512;
/** Default longest wait (ms). */
export const GPU_MEMORY_TIMEOUT_MS = 60_000;
/** Default poll interval (ms). */
export const GPU_MEMORY_POLL_MS = 500;
/** Limit for one nvidia-smi call (ms). */
export const GPU_MEMORY_EXEC_TIMEOUT_MS = 5_000;

const NO_NVIDIA_SMI = "no nvidia-smi on PATH";

/** One GPU's used memory. */
export interface GpuMemoryUse {
  /** Position in nvidia-smi's list (its GPU index order). */
  index: number;
  /** The GPU's name. */
  name: string;
  /** Used memory in MiB; null when nvidia-smi says [N/A] (e.g. MIG). */
  usedMib: number | null;
}

/** One reading: the GPUs, or why there are none. */
export interface GpuMemoryReading {
  /** False when nvidia-smi is missing, failed, or printed nothing usable. */
  available: boolean;
  /** One entry per GPU (empty when not available). */
  gpus: GpuMemoryUse[];
  /** Why it is not available; null when it is. */
  note: string | null;
}

/** Parses the CSV of {@link GPU_MEMORY_QUERY}: `1234, NVIDIA H200` per line. */
export function parseGpuMemoryCsv(text: string): GpuMemoryUse[] {
  const out: GpuMemoryUse[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const cut = line.indexOf(",");
    if (cut < 0) continue;
    const used = line.slice(0, cut).trim();
    const name = line.slice(cut + 1).trim();
    if (!name) continue;
    const v = Number(used);
    const usedMib = used !== "" && Number.isFinite(v) ? v : null;
    if (usedMib === null && !/^\[.*\]$|^n\/a$/i.test(used)) continue; // not a data line
    out.push({ index: out.length, name, usedMib });
  }
  return out;
}

/** Reads every GPU's used memory (MiB) via nvidia-smi; never throws. */
export async function gpuMemoryUsedMib(exec: ExecFn): Promise<GpuMemoryReading> {
  let r;
  try {
    r = await exec(GPU_MEMORY_QUERY, { timeoutMs: GPU_MEMORY_EXEC_TIMEOUT_MS });
  } catch (e) {
    return { available: false, gpus: [], note: `nvidia-smi could not be run (${(e as Error)?.message ?? e})` };
  }
  if (r.code === null || r.code === 127) return { available: false, gpus: [], note: NO_NVIDIA_SMI };
  if (r.code !== 0) {
    const first = r.stdout.trim().split("\n")[0]?.slice(0, 120) ?? "";
    return { available: false, gpus: [], note: `nvidia-smi failed (exit ${r.code}${first ? `: ${first}` : ""})` };
  }
  const gpus = parseGpuMemoryCsv(r.stdout);
  if (!gpus.length) return { available: false, gpus, note: "nvidia-smi listed no GPUs" };
  if (gpus.every((g) => g.usedMib === null)) {
    return { available: false, gpus, note: "nvidia-smi reports no memory use ([N/A], e.g. MIG)" };
  }
  return { available: true, gpus, note: null };
}

/** Options of {@link waitGpuMemory}. */
export interface WaitGpuMemoryOptions {
  /** How nvidia-smi is run. */
  exec: ExecFn;
  /** Allowed excess over the baseline per GPU (default 512 MiB). */
  toleranceMib?: number;
  /** Longest wait (default 60 000 ms). */
  timeoutMs?: number;
  /** Interval between readings (default 500 ms). */
  pollMs?: number;
  /** Sleeps `ms` (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** A monotonic clock in ms (default performance.now). */
  now?: () => number;
}

/** How the wait ended. */
export interface WaitGpuMemoryResult {
  /** True when memory came back (or the wait was skipped); false after a timeout. */
  ok: boolean;
  /** True when there was nothing to compare (no nvidia-smi, no baseline). */
  skipped: boolean;
  /** Time spent waiting (ms). */
  waitedMs: number;
  /** The last per-GPU used MiB read (null when none could be read). */
  last: (number | null)[] | null;
  /** The baseline per GPU, as compared. */
  baseline: (number | null)[] | null;
  /** The tolerance used (MiB). */
  toleranceMib: number;
  /** What happened, for the record (null when memory was back at the first reading). */
  note: string | null;
}

function baselineList(b: GpuMemoryReading | readonly (number | null)[] | number | null): (number | null)[] | null {
  if (b === null) return null;
  if (typeof b === "number") return [b];
  if (Array.isArray(b)) return [...b];
  const r = b as GpuMemoryReading;
  return r.available ? r.gpus.map((g) => g.usedMib) : null;
}

/** GPUs still over baseline + tolerance, as "GPU i: used MiB (baseline b)". */
function over(base: (number | null)[], used: (number | null)[], tol: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < base.length; i++) {
    const b = base[i], u = used[i];
    if (b === null || u === undefined || u === null) continue;
    if (u > b + tol) out.push(`GPU ${i}: ${u} MiB (baseline ${b})`);
  }
  return out;
}

/**
 * Waits until each GPU's used memory is at most its baseline + `toleranceMib`, polling every
 * `pollMs` up to `timeoutMs`. The baseline is a reading taken before the launch (or MiB per GPU;
 * a single number means GPU 0 only). No nvidia-smi, or no baseline: skipped with a note, `ok: true`.
 * A GPU whose memory reads [N/A] is not compared; a change in the number of GPUs is noted and only
 * the common ones are compared. A failed reading during the wait is retried until the timeout; when
 * no reading succeeded at all the result is a skip (`ok: true, skipped: true`) with the reason, since
 * nothing was measured. Only memory read and still over the tolerance at the timeout is `ok: false`.
 *
 * @example
 * const before = await gpuMemoryUsedMib(exec);
 * // ... launch, measure, stop ...
 * cell.gpu_memory = await waitGpuMemory(before, { exec });
 */
export async function waitGpuMemory(
  baselineMib: GpuMemoryReading | readonly (number | null)[] | number | null,
  opts: WaitGpuMemoryOptions,
): Promise<WaitGpuMemoryResult> {
  const tol = opts.toleranceMib ?? GPU_MEMORY_TOLERANCE_MIB;
  const timeoutMs = opts.timeoutMs ?? GPU_MEMORY_TIMEOUT_MS;
  const pollMs = Math.max(1, opts.pollMs ?? GPU_MEMORY_POLL_MS);
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = opts.now ?? (() => performance.now());
  const base = baselineList(baselineMib);
  const result = (
    ok: boolean,
    skipped: boolean,
    waitedMs: number,
    last: (number | null)[] | null,
    note: string | null,
  ): WaitGpuMemoryResult => ({ ok, skipped, waitedMs: Math.round(waitedMs), last, baseline: base, toleranceMib: tol, note });
  if (base === null || base.every((b) => b === null)) {
    const why = baselineMib !== null && typeof baselineMib === "object" && !Array.isArray(baselineMib)
      ? (baselineMib as GpuMemoryReading).note
      : null;
    return result(true, true, 0, null, `GPU memory wait skipped: no baseline${why ? ` (${why})` : ""}`);
  }
  const t0 = now();
  let last: (number | null)[] | null = null;
  let lastNote: string | null = null;
  let first = true;
  for (;;) {
    const r = await gpuMemoryUsedMib(opts.exec);
    const elapsed = now() - t0;
    if (r.available) {
      last = r.gpus.map((g) => g.usedMib);
      const notes: string[] = [];
      if (last.length !== base.length) {
        notes.push(`GPU count changed: ${base.length} at baseline, ${last.length} now; compared the first ${Math.min(base.length, last.length)}`);
      }
      const still = over(base, last, tol);
      if (!still.length) {
        if (elapsed > 0) notes.push(`GPU memory back within ${tol} MiB of baseline after ${Math.round(elapsed)} ms`);
        return result(true, false, elapsed, last, notes.length ? notes.join("; ") : null);
      }
      lastNote = [...notes, `still above baseline + ${tol} MiB: ${still.join(", ")}`].join("; ");
    } else if (first && r.note === NO_NVIDIA_SMI) {
      return result(true, true, elapsed, null, `GPU memory wait skipped: ${r.note}`);
    } else {
      lastNote = `nvidia-smi reading failed: ${r.note}`;
    }
    first = false;
    if (elapsed >= timeoutMs) {
      const msg = `GPU memory not back after ${Math.round(elapsed)} ms: ${lastNote}`;
      // Never a single good reading: nothing was measured, so this is a skip, not a failure.
      if (last === null) return result(true, true, elapsed, null, `GPU memory wait skipped: ${lastNote}`);
      return result(false, false, elapsed, last, msg);
    }
    await sleep(Math.max(1, Math.min(pollMs, timeoutMs - elapsed)));
  }
}
