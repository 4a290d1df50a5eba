/**
 * GPU telemetry and energy per token through dist/ik (issue 22 §3), against `ik mock`:
 * - a fake `nvidia-smi` on PATH printing the real CSV formats (the identity query, and the
 *   telemetry query with two H100s at 250 W and 150 W): every load level has its telemetry, and
 *   joules per output token = 400 W × the level's window / its output tokens; the capacity record
 *   gives them at N*; single mode (a rounds cell's too) samples its timed rounds;
 * - a DCGM exporter stand-in serving a real dcgm-exporter exposition (`--gpu-metrics-url`);
 * - a GPU that cannot be read (the URL refuses) is a limitation, never a failure.
 * Bun only (end to end): ~10 s.
 */
import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ROOT, runIk } from "../_helpers/ik.ts";
import { freePort } from "../_helpers/ports.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { loadArgs, merge, mergedRecords, runLocalShards, shardEnv, startAt } from "../shard/_sharded.ts";

describe("GPU telemetry through the binary", { skip: runtime.name === "bun" ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let dir = "";
  let mock: MockProc;
  let env: Record<string, string> = {};
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-gpu-tel-"));
    mock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "2"]);
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const load = (extra: string[], more: Record<string, string> = {}) =>
    runIk(["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--rates", "10,20", "--requests", "15", "--max-tokens", "16",
      "--warmup", "0", "--slo-ttft-p95-ms", "5000", "--json", ...extra], { env: { ...env, ...more }, timeoutMs: 60_000 });
  const measured = async (cap: { data: { measurement: string } }) => JSON.parse(await readFile(join(env.IK_RUNS_DIR, cap.data.measurement, "evidence.json"), "utf8"));

  test("a fake nvidia-smi: every level's power and energy per output token; the capacity record at N*", async () => {
    const bin = join(dir, "fake-bin");
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, "nvidia-smi"), `#!/bin/sh
case "$*" in
  *index,name,memory.total*) printf '0, NVIDIA H100 80GB HBM3, 81559, 1024, 550.54.15, GPU-aaaa\\n1, NVIDIA H100 80GB HBM3, 81559, 1024, 550.54.15, GPU-bbbb\\n' ;;
  *power.draw*) printf '0, GPU-aaaa, 250.00, 97, 70000, 1980\\n1, GPU-bbbb, 150.00, [N/A], 70000, [Not Supported]\\n' ;;
  *) exit 2 ;;
esac
`);
    await chmod(join(bin, "nvidia-smi"), 0o755);
    const r = await load([], { PATH: `${bin}${delimiter}${runtime.env("PATH") ?? ""}` });
    assert.equal(r.code, 0, r.stderr.slice(-1500));
    const cap = JSON.parse(r.stdout);
    const m = await measured(cap);
    assert.equal(m.identity.gpu.name, "NVIDIA H100 80GB HBM3");
    for (const lv of m.data.levels) {
      const g = lv.gpu;
      assert.ok(g && g.telemetry.available, `${lv.name}: ${JSON.stringify(g?.telemetry.note)}`);
      assert.equal(g.telemetry.source, "nvidia-smi");
      assert.equal(g.telemetry.total.gpus, 2);
      assert.ok(Math.abs(g.telemetry.total.mean_power_w - 400) < 1e-6, `${lv.name}: ${g.telemetry.total.mean_power_w} W`);
      const want = (400 * lv.summary.window_s) / lv.summary.output_tokens;
      assert.ok(Math.abs(g.energy.joules_per_output_token - want) / want < 1e-6, `${lv.name}: ${g.energy.joules_per_output_token} J/token vs ${want}`);
      assert.ok(Math.abs(g.energy.output_tokens_per_s_per_watt * g.energy.joules_per_output_token - 1) < 1e-4, "reciprocals (rounded to 6 digits)");
      assert.equal(g.telemetry.gpus[1].mean_util_pct, null, "[N/A] utilisation is null, never 0");
      assert.ok(m.metrics.some((x: { name: string; subject: string }) => x.name === "joules_per_output_token" && x.subject === lv.name));
    }
    assert.equal(cap.data.rate_star_rps, 20);
    // nvidia-smi lists 2 GPUs; per-GPU figures divided by the default 1: both records say so, and
    // with --gpu-count 2 neither does.
    const countNote = /divide by 1 GPU \(--gpu-count, default 1\), but nvidia-smi lists 2 on this host/;
    assert.ok(m.limitations.some((l: string) => countNote.test(l)), m.limitations.join(" | "));
    assert.ok(cap.limitations.some((l: string) => countNote.test(l)), cap.limitations.join(" | "));
    // --gpu-name names the GPUs; it does not turn nvidia-smi's sampling off (it did, silently).
    const two = await load(["--gpu-count", "2", "--gpu-name", "H100 SXM"], { PATH: `${bin}${delimiter}${runtime.env("PATH") ?? ""}` });
    assert.equal(two.code, 0, two.stderr.slice(-1500));
    const cap2 = JSON.parse(two.stdout);
    const m2 = await measured(cap2);
    assert.equal(m2.identity.gpu.name, "H100 SXM");
    assert.ok(m2.data.levels.every((l: { gpu: { telemetry: { available: boolean; source: string } } | null }) => l.gpu?.telemetry.available && l.gpu.telemetry.source === "nvidia-smi"), JSON.stringify(m2.data.levels[0].gpu));
    assert.ok(!m2.limitations.some((l: string) => /nvidia-smi lists/.test(l)));
    assert.ok(!cap2.limitations.some((l: string) => /nvidia-smi lists/.test(l)));
    // Single mode (a rounds cell's too): the GPUs over the timed rounds.
    const one = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rounds", "2", "--warmup", "0", "--max-tokens", "16", "--json"],
      { env: { ...env, PATH: `${bin}${delimiter}${runtime.env("PATH") ?? ""}` }, timeoutMs: 60_000 });
    assert.equal(one.code, 0, one.stderr.slice(-1500));
    const srec = JSON.parse(one.stdout);
    assert.ok(srec.data.gpu_telemetry.telemetry.available, JSON.stringify(srec.data.gpu_telemetry.telemetry.note));
    assert.ok(Math.abs(srec.data.gpu_telemetry.telemetry.total.mean_power_w - 400) < 1e-6);
    assert.ok(srec.data.gpu_telemetry.energy.joules_per_output_token > 0);
    assert.ok(srec.metrics.some((x: { name: string }) => x.name === "output_tok_s_per_watt"));
    const at = m.data.levels.find((l: { level: number }) => l.level === 20);
    assert.equal(cap.data.joules_per_output_token, at.gpu.energy.joules_per_output_token);
    assert.ok(cap.metrics.some((x: { name: string; stat: string }) => x.name === "output_tok_s_per_watt" && x.stat === "at_n_star"));
  });

  test("a DCGM exporter stand-in (--gpu-metrics-url); an unreachable one is a limitation, never a failure", async () => {
    const text = await readFile(join(ROOT, "tests", "testdata", "gpu", "dcgm_h100x2_t0.prom"), "utf8");
    const server: Server = createServer((_req, res) => {
      res.setHeader("content-type", "text/plain; version=0.0.4");
      res.end(text);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
      const r = await load(["--gpu-metrics-url", url]);
      assert.equal(r.code, 0, r.stderr.slice(-1500));
      const m = await measured(JSON.parse(r.stdout));
      // No nvidia-smi here: the exporter's modelName labels name the GPUs (the identity was missing).
      assert.deepEqual(m.identity.gpu, { name: "NVIDIA H100 80GB HBM3", count: 2, source: "dcgm-exporter" });
      assert.ok(!m.missing.some((x: string) => /gpu identity/.test(x)), m.missing.join(" | "));
      assert.ok(m.limitations.some((l: string) => /divide by 1 GPU \(--gpu-count, default 1\), but the DCGM exporter lists 2, and/.test(l)), m.limitations.join(" | "));
      for (const lv of m.data.levels) {
        assert.equal(lv.gpu.telemetry.source, "dcgm");
        assert.equal(lv.gpu.telemetry.available, true, JSON.stringify(lv.gpu.telemetry.note));
        assert.ok(lv.gpu.telemetry.total.mean_power_w > 0);
        assert.ok(lv.gpu.energy.joules_per_output_token > 0);
      }
      // A shard (shard 0 samples, as it scrapes the server) and its merge keep the telemetry.
      const senv = await shardEnv(join(dir, "shard"));
      const [sr] = await runLocalShards(1, loadArgs(mock.base, startAt(2000), ["--rates", "10", "--requests", "10", "--max-tokens", "16", "--gpu-metrics-url", url]), { env: senv, staggerMs: 0, jobIndex: false });
      assert.equal(sr.code, 0, sr.stderr.slice(-1500));
      const mg = await merge([senv.IK_RUNS_DIR], senv, join(dir, "shard-merged"));
      assert.equal(mg.code, 0, mg.stderr.slice(-1500));
      const merged = (await mergedRecords(mg, join(dir, "shard-merged"))).measured as { data: { levels: { gpu: { telemetry: { source: string }; energy: { joules_per_output_token: number } } }[] } };
      assert.equal(merged.data.levels[0].gpu.telemetry.source, "dcgm");
      assert.ok(merged.data.levels[0].gpu.energy.joules_per_output_token > 0);
    } finally {
      await new Promise((ok) => server.close(ok));
    }
    // An exporter that answers its first scrapes only (the identity's, before the run, and the
    // level's first poll): the N* level's J/token rests on a sliver of its window, and the capacity
    // record, which publishes it, says so (only the level did).
    let scrapes = 0;
    const once: Server = createServer((_req, res) => {
      res.statusCode = ++scrapes <= 2 ? 200 : 503;
      res.end(scrapes <= 2 ? text : "restarting");
    });
    await new Promise<void>((ok) => once.listen(0, "127.0.0.1", ok));
    try {
      const url = `http://127.0.0.1:${(once.address() as { port: number }).port}/metrics`;
      const r = await runIk(["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--rates", "10", "--requests", "25", "--max-tokens", "16",
        "--warmup", "0", "--slo-ttft-p95-ms", "5000", "--json", "--gpu-metrics-url", url], { env, timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr.slice(-1500));
      const cap = JSON.parse(r.stdout);
      assert.ok(cap.data.joules_per_output_token > 0, JSON.stringify(cap.data));
      assert.ok(cap.limitations.some((l: string) => /^GPU energy at r10: power covered only [\d.]+ s of the [\d.]+ s window/.test(l)), cap.limitations.join(" | "));
    } finally {
      await new Promise((ok) => once.close(ok));
    }
    const down = await load(["--gpu-metrics-url", `http://127.0.0.1:${await freePort()}/metrics`]);
    assert.equal(down.code, 0, down.stderr.slice(-1500));
    const m = await measured(JSON.parse(down.stdout));
    assert.equal(m.data.levels[0].gpu.telemetry.available, false);
    assert.equal(m.data.levels[0].gpu.energy.joules_per_output_token, null);
    assert.ok(m.limitations.some((l: string) => /^GPU telemetry: /.test(l)), m.limitations.join(" | "));
  });
});
