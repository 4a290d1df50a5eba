/**
 * Client headroom: "is this machine's client the bottleneck?" The mock answers after 50 ms and
 * then streams as fast as it can (tpot 0); at 1, 64 and 256 concurrent streams ik reports the
 * events parsed per second, its own CPU per event, and how far the measured TTFT drifts from 50 ms.
 */
import { broken, type Check, info } from "./checks.ts";
import { nearestRank } from "../stats/mod.ts";
import { startMockProcess } from "./mock_process.ts";
import type { SelftestDeps, SendRow } from "./send.ts";

const TTFT_MS = 50;

/** The levels measured: concurrency, requests and tokens per request. */
export const LEVELS = [
  { conc: 1, requests: 12, tokens: 128 },
  { conc: 64, requests: 128, tokens: 128 },
  { conc: 256, requests: 256, tokens: 64 },
];

/** Runs `requests` sends over `conc` workers; returns the rows and the client CPU and wall time spent. */
async function runLevel({ rt, send }: SelftestDeps, baseUrl: string, lv: typeof LEVELS[number]) {
  let next = 0;
  const rows: SendRow[] = [];
  const cpu0 = rt.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (next < lv.requests) {
      const i = next++;
      rows.push(await send({ baseUrl, engine: "vllm", maxTokens: lv.tokens, prompt: `headroom ${lv.conc} ${i}`, exactLength: true }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(lv.conc, lv.requests) }, worker));
  const wallS = (performance.now() - t0) / 1000;
  const cpu1 = rt.cpuUsage();
  return { rows, wallS, cpuUs: cpu1.userUs - cpu0.userUs + cpu1.systemUs - cpu0.systemUs };
}

/** Measures client headroom at each level (reported as INFO rows, plus a FAIL if requests fail). */
export async function headroomChecks(deps: SelftestDeps): Promise<Check[]> {
  const g = "headroom";
  const out: Check[] = [];
  let mock;
  try {
    mock = await startMockProcess(deps.rt, ["--engine", "vllm", "--ttft-ms", String(TTFT_MS), "--tpot-ms", "0"], deps.ikArgv);
  } catch (e) {
    return [broken(g, "mock started", (e as Error).message)];
  }
  try {
    for (const lv of LEVELS) {
      const { rows, wallS, cpuUs } = await runLevel(deps, mock.baseUrl, lv);
      const ok = rows.filter((r) => r.ok);
      const events = ok.reduce((a, r) => a + (r.n_token_events ?? 0), 0);
      const errs = ok.map((r) => (r.ttft_ms as number) - TTFT_MS);
      const name = `c=${lv.conc}`;
      if (ok.length < rows.length) {
        out.push(broken(g, `${name} requests ok`, `${ok.length}/${rows.length}; first error: ${rows.find((r) => !r.ok)?.error}`));
        continue;
      }
      out.push(info(g, `${name} events/s parsed`, `${Math.round(events / wallS)}`, `${lv.requests} req x ${lv.tokens} tok`));
      out.push(info(g, `${name} client CPU per event`, `${(cpuUs / Math.max(1, events)).toFixed(2)} µs`));
      out.push(info(g, `${name} TTFT error p50 / p99`, `${nearestRank(errs, 50)?.toFixed(1)} / ${nearestRank(errs, 99)?.toFixed(1)} ms`, `vs ${TTFT_MS} ms`));
    }
  } finally {
    await mock.stop();
  }
  return out;
}
