/**
 * `npm run bench:headroom`: the client lag (mock wrote the first token → the client parsed it) and
 * TTFT − the mock's own first_ms at 1, 64 and 256 streams, each wave of streams started at once
 * against a mock in its own process, for both builds: the Bun build (this Bun with dist/ik's flags, dist/ik's mock) and
 * the Node build (the same client bundled for the Node that dist/ik-node embeds, dist/ik-node's
 * mock). Prints the tables and writes benchmarks/headroom/RESULTS.md (with the host's CPU name) for the
 * README. Goals: client lag p50 ≤ 1 ms and p99 ≤ 3 ms at 1 and 64 streams, p99 ≤ 1 ms at 256:
 * measured and reported, never asserted. A child run (IK_HEADROOM_CHILD=1) measures its own
 * runtime's client against the mock IK_BIN and prints JSON.
 * @module
 */
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { measuringStartEnv, runtime } from "../../lib/runtime/mod.ts";
import { setDefaultFetch } from "../../lib/client/mod.ts";
import { HEADROOM_MOCK_ARGS, type LevelResult, measureLevels } from "../../lib/selftest/headroom.ts";
import { cpuShare } from "../../lib/selftest/cpu_share.ts";
import { startMockProcess } from "../../lib/selftest/mock_process.ts";
import { makeSender } from "../../lib/selftest/send.ts";
import { floorTable, measureFloor } from "./floor.ts";
import { cpuName } from "../_host_cpu.ts";
import { runtimeFlagsOf } from "../_runtime_flags.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");

/** The bench levels: more requests than the selftest's, for a steadier p99. */
export const BENCH_LEVELS = [
  { conc: 1, requests: 50, tokens: 16 },
  { conc: 64, requests: 256, tokens: 64 },
  { conc: 256, requests: 512, tokens: 32 },
];

/** The host CPU (benchmarks/_host_cpu.ts). */
export { cpuName };

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

/** One build's measurement: how its client ran and which mock binary answered. */
interface BuildRun {
  build: string;
  client: string;
  mock: string;
  rows: LevelResult[] | null;
  note: string | null;
}

/** Measures this process's client against the mock IK_BIN (or cli.ts) and prints the rows as JSON. */
async function measureHere(): Promise<void> {
  setDefaultFetch(runtime.fetch); // as cli.ts does: the client ik's binary runs
  const bin = runtime.env("IK_BIN");
  const ikArgv = bin
    ? [resolve(ROOT, bin)]
    : runtime.name === "deno"
    ? [runtime.execPath(), "run", "-A", join(ROOT, "cli.ts")]
    : [runtime.execPath(), join(ROOT, "cli.ts")];
  const deps = { rt: runtime, send: makeSender(new AbortController().signal), ikArgv };
  const mock = await startMockProcess(runtime, HEADROOM_MOCK_ARGS, ikArgv);
  const before = cpuShare(runtime);
  let rows: LevelResult[];
  try {
    rows = await measureLevels(deps, mock, BENCH_LEVELS);
  } finally {
    await mock.stop();
  }
  const share = Math.min(before, cpuShare(runtime));
  runtime.writeStdout(JSON.stringify({ rows, share }) + "\n");
}

/** Runs one build's client in its own process (with `env` added) and reads its rows back. */
async function runBuild(build: string, argv: string[], mock: string, env: Record<string, string> = {}): Promise<BuildRun & { share: number }> {
  const child = runtime.spawn(argv, { env: { ...env, IK_HEADROOM_CHILD: "1", IK_BIN: mock }, pipeStdout: true });
  const text = child.stdout ? await new Response(child.stdout).text() : "";
  const st = await child.exited;
  const last = text.trim().split("\n").pop() ?? "";
  try {
    const { rows, share } = JSON.parse(last) as { rows: LevelResult[]; share: number };
    return { build, client: argv[0], mock, rows, note: null, share };
  } catch {
    return { build, client: argv[0], mock, rows: null, note: `client exited ${st.code ?? st.signal}: ${last.slice(0, 200)}`, share: 0 };
  }
}

/**
 * The Bun flags dist/ik runs with (`--version --json`'s runtime_flags, built in with
 * --compile-exec-argv) and the environment its `ik selftest` measures in: what the measuring process
 * starts with that this one lacks.
 */
function binaryRuntime(bin: string): { flags: string[]; env: Record<string, string> } {
  return { flags: runtimeFlagsOf(bin), env: measuringStartEnv((n) => runtime.env(n), runtime.version, 0) };
}

/** The cached Node the Node build embeds (release.ts puts it under .bun-cache), or null. */
async function cachedNode(): Promise<string | null> {
  const { readdir } = await import("node:fs/promises");
  const { arch } = await import("node:os");
  const dir = join(ROOT, ".bun-cache", "ik-release");
  const hit = (await readdir(dir).catch(() => [] as string[])).find((n) => n.startsWith(`node-linux-${arch()}@`));
  return hit ? join(dir, hit, "bin", "node") : null;
}

async function main(): Promise<void> {
  if (runtime.env("IK_HEADROOM_CHILD")) return await measureHere();
  const runs: (BuildRun & { share: number })[] = [];
  const bunBin = join(ROOT, "dist", "ik");
  const nodeBin = join(ROOT, "dist", "ik-node");
  const { existsSync } = await import("node:fs");
  // Bun build: ik's client on this Bun against dist/ik's mock, as `ik selftest` of dist/ik runs:
  // with the binary's own runtime flags (--smol: JSC's heap sizing, so its collections) and the
  // environment its measuring process starts with (lib/runtime/_start_env.ts).
  if (existsSync(bunBin)) {
    const { flags, env } = binaryRuntime(bunBin);
    runs.push(await runBuild(`Bun build (${["bun", ...flags].join(" ")})`, [runtime.execPath(), ...flags, join(HERE, "run.ts")], bunBin, env));
  }
  else runs.push({ build: "Bun build", client: "-", mock: bunBin, rows: null, note: "dist/ik missing: npm run build", share: 0 });
  // Node build: the same code bundled for Node, on the Node the Node build embeds, against dist/ik-node's mock.
  const node = await cachedNode();
  if (node && existsSync(node) && existsSync(nodeBin)) {
    const { mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const dir = await mkdtemp(join(tmpdir(), "ik-headroom-"));
    const bundle = join(dir, "run.mjs");
    const b = runtime.spawn([runtime.execPath(), "build", "--target=node", "--format=esm", join(HERE, "run.ts"), "--outfile", bundle]);
    await b.exited;
    try {
      runs.push(await runBuild("Node build", [node, bundle], nodeBin));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } else {
    runs.push({
      build: "Node build",
      client: "-",
      mock: nodeBin,
      rows: null,
      note: "dist/ik-node or the cached Node missing: bun scripts/release.ts --host-node-only",
      share: 0,
    });
  }
  // The floor: a minimal C client (floor_client.c) against dist/ik's mock, the same waves.
  const floor = existsSync(bunBin) ? await measureFloor(BENCH_LEVELS, bunBin) : "dist/ik missing";
  const cpu = cpuName();
  const parts: string[] = [];
  const goals: string[] = [];
  for (const r of runs) {
    parts.push(`### ${r.build}${r.rows ? ` (CPU share in a spin probe: ${(100 * r.share).toFixed(0)} %)` : ""}`, "");
    if (!r.rows) {
      parts.push(`not measured: ${r.note}`, "");
      continue;
    }
    parts.push(resultsTable(r.rows), "");
    for (const lv of r.rows) {
      if (lv.conc === 256) {
        goals.push(`${r.build}, 256 streams: client lag p99 ${lv.lagP99?.toFixed(2) ?? "n/a"} ms (goal ≤ 1: ${(lv.lagP99 ?? 99) <= 1 ? "met" : "not met"})`);
      } else {
        const ok = (lv.lagP50 ?? 99) <= 1 && (lv.lagP99 ?? 99) <= 3;
        goals.push(
          `${r.build}, ${lv.conc} stream${lv.conc > 1 ? "s" : ""}: client lag p50 ${lv.lagP50?.toFixed(2)} / p99 ${lv.lagP99?.toFixed(2)} ms, TTFT − first_ms p50 ${lv.ttftMinusFirstP50?.toFixed(2)} ms (goal p50 ≤ 1, p99 ≤ 3: ${ok ? "met" : "not met"})`,
        );
      }
    }
  }
  parts.push("### Floor: a minimal C client (benchmarks/headroom/floor_client.c) against dist/ik's mock", "");
  parts.push(typeof floor === "string" ? `not measured: ${floor}` : floorTable(floor), "");
  const body = parts.join("\n");
  const md = [
    "# Client headroom",
    "",
    `Host CPU: ${cpu}. Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:headroom\`.`,
    "",
    "Client lag = when the client parsed the first token − when the mock wrote it (the mock's",
    "recv_wall_ms + first_ms against the client's timeOrigin + t_send + TTFT: one host, one wall",
    "clock). TTFT − first_ms = the send leg (client send → the mock has read the request) + the",
    "client lag: what `ik selftest` judges. The mock (a separate process) answers after 50 ms, then",
    "streams 5 ms per token; each wave of streams starts at once, after one unmeasured warm-up wave.",
    "Bun build: ik's client on Bun with dist/ik's own runtime flags (--smol) and the environment",
    "its measuring process starts with, against dist/ik's mock. Node build: the same client bundled for",
    "Node, on the Node dist/ik-node embeds, against dist/ik-node's mock (what `ik selftest` of the",
    "Node build measures). At 64 and 256 streams the send leg is the mock reading the requests one",
    "after another, not the client. The floor is what this host and the mock cost before any client",
    "code: a C epoll client with no allocation per event, its lag computed the same way.",
    "",
    body,
    goals.join("\n\n"),
    "",
  ].join("\n");
  for (const r of runs) for (const lv of r.rows ?? []) if (lv.error) runtime.writeStderr(`bench:headroom: ${r.build} c=${lv.conc}: ${lv.error}\n`);
  runtime.writeStdout(`${body}\n${goals.join("\n")}\nhost CPU: ${cpu}\n`);
  await writeFile(join(HERE, "RESULTS.md"), md);
  runtime.writeStdout(`wrote ${join("benchmarks", "headroom", "RESULTS.md")}\n`);
}

if (import.meta.main || runtime.env("IK_HEADROOM_CHILD")) await main();
