/**
 * The GPU identity of this host, from `nvidia-smi` (records name the GPU a number was measured
 * on; the seeds read it locally when the server is on this machine). Parsing is pure; running the
 * command is injected, so tests and hosts without a GPU need no nvidia-smi.
 * @module
 */

/** Runs a command and returns its exit code and stdout (null code: it could not be started). */
export type ExecFn = (argv: string[], opts: { timeoutMs: number }) => Promise<{ code: number | null; stdout: string }>;

/** One GPU as nvidia-smi lists it. */
export interface GpuInfo {
  index: number;
  name: string;
  memoryTotalMib: number | null;
  memoryUsedMib: number | null;
  driverVersion: string | null;
  uuid: string | null;
}

/** The query ik sends: one CSV line per GPU, no header, no units. */
export const GPU_QUERY = ["nvidia-smi", "--query-gpu=index,name,memory.total,memory.used,driver_version,uuid", "--format=csv,noheader,nounits"];

function num(s: string | undefined): number | null {
  if (s === undefined) return null;
  const t = s.trim();
  if (t === "" || /not supported|n\/a|\[.*\]/i.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/**
 * Parses the CSV of {@link GPU_QUERY}. Lines that do not parse are skipped; "[N/A]" or
 * "[Not Supported]" fields (MIG, some drivers) become null.
 */
export function parseGpuCsv(text: string): GpuInfo[] {
  const out: GpuInfo[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const f = line.split(",").map((s) => s.trim());
    if (f.length < 2) continue;
    const index = Number(f[0]);
    if (!Number.isInteger(index) || !f[1]) continue;
    out.push({
      index,
      name: f[1],
      memoryTotalMib: num(f[2]),
      memoryUsedMib: num(f[3]),
      driverVersion: f[4] && !/^\[/.test(f[4]) ? f[4] : null,
      uuid: f[5] && !/^\[/.test(f[5]) ? f[5] : null,
    });
  }
  return out;
}

/**
 * The name most GPUs carry (the first seen among ties) and, when they differ, every name in the
 * order first seen; null for no names.
 */
export function gpuNames(names: readonly string[]): { name: string; names?: string[] } | null {
  if (!names.length) return null;
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  const name = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
  return counts.size > 1 ? { name, names: [...counts.keys()] } : { name };
}

/** The record's gpu identity: the name (most GPUs' name when mixed, listed in `names`), count, memory, driver. */
export function gpuIdentity(gpus: readonly GpuInfo[]): Record<string, unknown> | null {
  const named = gpuNames(gpus.map((g) => g.name));
  if (!named) return null;
  const id: Record<string, unknown> = {
    name: named.name,
    count: gpus.length,
    memory_total_mib: gpus[0].memoryTotalMib,
    driver_version: gpus[0].driverVersion,
    source: "nvidia-smi",
  };
  if (named.names) id.names = named.names;
  return id;
}

/** Asks nvidia-smi (5 s limit); an empty list when it is missing or fails. */
export async function queryGpus(exec: ExecFn): Promise<GpuInfo[]> {
  try {
    const r = await exec(GPU_QUERY, { timeoutMs: 5000 });
    return r.code === 0 ? parseGpuCsv(r.stdout) : [];
  } catch {
    return [];
  }
}
