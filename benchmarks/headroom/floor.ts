/**
 * The floor of bench:headroom's client lag on this host: `floor_client.c` (a minimal C epoll
 * client, see its header) sends the same waves at 1, 64 and 256 streams to the same mock
 * (dist/ik's, or IK_BIN's), and its lag is computed exactly as for ik's client: the client's wall
 * clock when the first token is in hand − the mock's recv_wall_ms + first_ms. What the floor shows
 * at a level is what the host and the mock cost before any client code: the part of ik's lag
 * above it is ik's. Needs gcc; prints a table (and returns rows to benchmarks/headroom/run.ts).
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runtime } from "../../lib/runtime/mod.ts";
import { HEADROOM_MOCK_ARGS } from "../../lib/selftest/headroom.ts";
import { startMockProcess } from "../../lib/selftest/mock_process.ts";
import { pairByPrompt } from "../../lib/selftest/request_log.ts";
import { nearestRank } from "../../lib/stats/mod.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");

/** One level of the floor client. */
export interface FloorRow {
  conc: number;
  requests: number;
  lagP50: number | null;
  lagP90: number | null;
  lagP99: number | null;
  /** Client send → the mock has read the request (wall clocks), p50 and p99, ms. */
  sendLegP50: number | null;
  sendLegP99: number | null;
  mockLateP50: number | null;
  error: string | null;
}

async function run(argv: string[]): Promise<{ code: number | null; out: string }> {
  const p = runtime.spawn(argv, { pipeStdout: true });
  const out = p.stdout ? await new Response(p.stdout).text() : "";
  const st = await p.exited;
  return { code: st.code, out };
}

/**
 * Compiles floor_client.c and measures it at each level against one mock process.
 * @param levels concurrency, requests and tokens per request, as benchmarks/headroom's BENCH_LEVELS
 * @returns the rows, or a string saying why the floor could not be measured
 */
export async function measureFloor(
  levels: readonly { conc: number; requests: number; tokens: number }[],
  mockBin: string,
): Promise<FloorRow[] | string> {
  const dir = await mkdtemp(join(tmpdir(), "ik-floor-"));
  try {
    const exe = join(dir, "floor_client");
    const cc = await run(["gcc", "-O2", "-o", exe, join(HERE, "floor_client.c")]).catch(() => ({ code: -1, out: "" }));
    if (cc.code !== 0) return "gcc could not build floor_client.c";
    const mock = await startMockProcess(runtime, HEADROOM_MOCK_ARGS, [mockBin]);
    const out: FloorRow[] = [];
    try {
      let mark = 0;
      for (const lv of levels) {
        // One unmeasured wave first, as benchmarks/headroom does (connections open, code paths warm).
        const warm = await run([exe, String(mock.port), String(lv.conc), String(lv.conc), "4"]);
        mark += lv.conc;
        const r = await run([exe, String(mock.port), String(lv.conc), String(lv.requests), String(lv.tokens)]);
        const logs = (await mock.requestLog(mark + lv.requests)).slice(mark);
        mark += lv.requests;
        const base = { conc: lv.conc, requests: lv.requests };
        if (warm.code !== 0 || r.code !== 0) {
          out.push({ ...base, lagP50: null, lagP90: null, lagP99: null, sendLegP50: null, sendLegP99: null, mockLateP50: null, error: `floor_client exited ${r.code}` });
          continue;
        }
        const stamps = r.out.trim().split("\n").map((l) => l.split(" ").map(Number));
        const paired = pairByPrompt(stamps.map((s) => s[0]), logs);
        if (typeof paired === "string") {
          out.push({ ...base, lagP50: null, lagP90: null, lagP99: null, sendLegP50: null, sendLegP99: null, mockLateP50: null, error: paired });
          continue;
        }
        const lags = stamps.map((s, i) => s[2] - ((paired[i].recvWallMs ?? NaN) + (paired[i].firstMs ?? NaN)));
        const legs = stamps.map((s, i) => (paired[i].recvWallMs ?? NaN) - s[1]);
        out.push({
          ...base,
          sendLegP50: nearestRank(legs, 50),
          sendLegP99: nearestRank(legs, 99),
          lagP50: nearestRank(lags, 50),
          lagP90: nearestRank(lags, 90),
          lagP99: nearestRank(lags, 99),
          mockLateP50: nearestRank(paired.map((p) => (p.firstMs ?? NaN) - 50), 50),
          error: null,
        });
      }
    } finally {
      await mock.stop();
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The floor rows as a Markdown table. */
export function floorTable(rows: readonly FloorRow[]): string {
  const f = (v: number | null) => (v === null ? "n/a" : v.toFixed(2));
  return [
    "| streams | requests | floor lag p50 (ms) | p90 (ms) | p99 (ms) | send leg p50 / p99 (ms) | mock late p50 (ms) |",
    "|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((r) =>
      `| ${r.conc} | ${r.requests} | ${f(r.lagP50)} | ${f(r.lagP90)} | ${f(r.lagP99)} | ${f(r.sendLegP50)} / ${f(r.sendLegP99)} | ${f(r.mockLateP50)} |`
    ),
  ].join("\n");
}

if (import.meta.main) {
  const { BENCH_LEVELS, cpuName } = await import("./run.ts");
  const bin = resolve(ROOT, runtime.env("IK_BIN") ?? "dist/ik");
  const rows = await measureFloor(BENCH_LEVELS, bin);
  if (typeof rows === "string") runtime.writeStderr(`bench:headroom floor: ${rows}\n`);
  else runtime.writeStdout(`${floorTable(rows)}\nmock: ${bin}\nhost CPU: ${cpuName()}\n`);
}
