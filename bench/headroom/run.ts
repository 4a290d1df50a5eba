/**
 * `npm run bench:headroom`: the client lag (client TTFT − the mock's own first_ms) at 1, 64 and
 * 256 streams, each wave of streams started at once against a `--tpot-ms 0` mock in its own
 * process. Prints the table and writes bench/headroom/RESULTS.md (with the host's CPU name) for
 * the README. The goal on a 2-core machine is a p99 ≤ 1 ms at 256 streams: measured and
 * reported, never asserted. The mock runs from IK_BIN when set, else from cli.ts on this runtime.
 * @module
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runtime } from "../../lib/runtime/mod.ts";
import { setDefaultFetch } from "../../lib/client/mod.ts";
import { HEADROOM_MOCK_ARGS, type LevelResult, measureLevels } from "../../lib/selftest/headroom.ts";
import { cpuShare } from "../../lib/selftest/cpu_share.ts";
import { startMockProcess } from "../../lib/selftest/mock_process.ts";
import { makeSender } from "../../lib/selftest/send.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");

/** The bench levels: more requests than the selftest's, for a steadier p99. */
export const BENCH_LEVELS = [
  { conc: 1, requests: 50, tokens: 16 },
  { conc: 64, requests: 256, tokens: 64 },
  { conc: 256, requests: 512, tokens: 32 },
];

/** The CPU model name from /proc/cpuinfo, or "unknown". */
export async function cpuName(): Promise<string> {
  const text = await readFile("/proc/cpuinfo", "utf8").catch(() => "");
  const m = text.match(/^model name\s*:\s*(.+)$/m) ?? text.match(/^Hardware\s*:\s*(.+)$/m);
  const cores = (text.match(/^processor\s*:/gm) ?? []).length;
  return `${m ? m[1].trim() : "unknown"}${cores ? ` (${cores} logical CPUs)` : ""}`;
}

/** The results as a Markdown table. */
export function resultsTable(rows: LevelResult[]): string {
  const f = (v: number | null, d = 2) => (v === null ? "n/a" : v.toFixed(d));
  const lines = [
    "| streams | requests | tokens | ok | client lag p50 (ms) | client lag p99 (ms) | TTFT − first_ms p50 / p99 (ms) | send leg p50 / p99 (ms) | mock late p50 (ms) | events/s parsed | client CPU per event (µs) |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.conc} | ${r.requests} | ${r.tokens} | ${r.ok} | ${f(r.lagP50)} | ${f(r.lagP99)} | ${
        f(r.ttftMinusFirstP50)
      } / ${f(r.ttftMinusFirstP99)} | ${f(r.sendLegP50)} / ${f(r.sendLegP99)} | ${f(r.mockLateP50)} | ${
        Math.round(r.eventsPerS)
      } | ${f(r.cpuUsPerEvent)} |`,
    );
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  setDefaultFetch(runtime.fetch); // as cli.ts does: the client ik's binary runs
  const bin = runtime.env("IK_BIN");
  const ikArgv = bin
    ? [resolve(ROOT, bin)]
    : runtime.name === "deno"
    ? [runtime.execPath(), "run", "-A", join(ROOT, "cli.ts")]
    : [runtime.execPath(), join(ROOT, "cli.ts")];
  const deps = { rt: runtime, send: makeSender(new AbortController().signal), ikArgv };
  const mock = await startMockProcess(runtime, HEADROOM_MOCK_ARGS, ikArgv);
  let rows: LevelResult[];
  const before = cpuShare(runtime);
  try {
    rows = await measureLevels(deps, mock, BENCH_LEVELS);
  } finally {
    await mock.stop();
  }
  const share = Math.min(before, cpuShare(runtime));
  const cpu = await cpuName();
  const table = resultsTable(rows);
  const at256 = rows.find((r) => r.conc === 256);
  const goal = at256?.lagP99 !== null && at256?.lagP99 !== undefined
    ? `p99 at 256 streams: ${at256.lagP99.toFixed(2)} ms (goal ≤ 1 ms: ${
      at256.lagP99 <= 1 ? "met" : "not met"
    })`
    : "p99 at 256 streams: not measured";
  const md = [
    "# Client headroom",
    "",
    `Host CPU: ${cpu}; the bench got ${
      (100 * share).toFixed(0)
    } % of a CPU in a spin probe (100 % = a quiet host). Runtime: ${runtime.name}${
      bin ? ` (mock: ${bin})` : " (mock from cli.ts)"
    }. Measured ${new Date().toISOString().slice(0, 10)}.`,
    "",
    "Client lag = when the client parsed the first token − when the mock wrote it (the mock's",
    "recv_wall_ms + first_ms against the client's timeOrigin + t_send + TTFT: one host, one wall",
    "clock). TTFT − first_ms = the send leg (client send → the mock has read the request) + the",
    "client lag. The mock (a separate process) answers after 50 ms, then streams 5 ms per token;",
    "each wave of streams starts at once, after one unmeasured warm-up wave. `ik selftest` fails",
    "when the client lag p99 at 64 streams is over 15 ms.",
    "",
    table,
    "",
    goal,
    "",
  ].join("\n");
  for (const r of rows) if (r.error) runtime.writeStderr(`bench:headroom: c=${r.conc}: ${r.error}\n`);
  runtime.writeStdout(
    `${table}\n\n${goal}\nhost CPU: ${cpu}; CPU share in a spin probe: ${(100 * share).toFixed(0)} %\n`,
  );
  await writeFile(join(HERE, "RESULTS.md"), md);
  runtime.writeStdout(`wrote ${join("bench", "headroom", "RESULTS.md")}\n`);
}

if (import.meta.main) await main();
