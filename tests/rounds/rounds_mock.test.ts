/**
 * `ik bench rounds` end to end through dist/ik with `ik mock` processes as engines (Bun only,
 * CONTRACTS.md "CI time"):
 * - three engines whose decode speeds differ by 15 % and 30 % for 6 rounds (n = 3 has period 6):
 *   the Williams order run, every slower engine's ratio CI excluding 1 with its median ratio within
 *   2 % of the true one, resolved configs from the mocks' vLLM/SGLang/llama.cpp startup logs and an
 *   `expect` hard gate, and no engine process left (~40 s);
 * - a separate short run of broken engines for each failing status, a grandchild killed with its
 *   group, an engine that ignores SIGTERM killed after the stop timeout, a missing metrics path
 *   noted without failing the cell (~25 s).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts } from "../_helpers/ports.ts";
import { after, before, describe, test } from "node:test";
import { ikBin, runIk } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { roundOrders } from "../../lib/rounds/williams.ts";

const BUN = runtime.name === "bun";
let dir: string;


/** Processes whose command line holds `marker`, other than pgrep itself. */
function survivors(marker: string): string[] {
  const r = spawnSync("pgrep", ["-af", marker], { encoding: "utf8" });
  return (r.stdout ?? "").split("\n").filter((l) => l.trim() && !l.includes("pgrep"));
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-rounds-mock-"));
  await writeFile(join(dir, "two.jsonl"), [
    { id: "p1", bucket: "short", messages: [{ role: "user", content: "Hello there" }], max_tokens: 16 },
    { id: "p2", bucket: "long", messages: [{ role: "user", content: "Tell me a story about a lighthouse" }], max_tokens: 16 },
  ].map((r) => JSON.stringify(r)).join("\n") + "\n");
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const readJson = async (p: string) => JSON.parse(await readFile(p, "utf8"));

describe("bench rounds with ik mock engines", { skip: BUN ? false : "Bun only (heavy end-to-end; CONTRACTS.md CI time)" }, () => {
  test("3 engines, 6 rounds: Williams order, ratio CIs exclude 1, ratios within 2 % of the truth, nothing survives (~40 s)", async () => {
    const ik = ikBin();
    const marker = `rounds-e2e-${process.pid}`;
    const [p1, p2, p3] = await freePorts(3);
    // Decode speed 1/tpot: mid is 15 % slower (tpot x 1/0.85), slow 30 % slower (x 1/0.70).
    const tpot = { fast: 8, mid: 8 / 0.85, slow: 8 / 0.7 };
    const mock = (engine: string, port: number, t: number, log: string, extra: string[] = []) =>
      [ik, "mock", "--engine", engine, "--port", String(port), "--tpot-ms", String(t), "--ttft-ms", "20", "--startup-log", log, "--model", marker, ...extra];
    const run = join(dir, "three");
    const manifest = {
      model: { id: marker },
      engines: [
        { label: "fast", name: "vllm", version: "0.11.0", launch: mock("vllm", p1, tpot.fast, "vllm"), port: p1, expect: { max_num_seqs: 256, enable_prefix_caching: true } },
        { label: "mid", name: "sglang", launch: mock("sglang", p2, tpot.mid, "sglang"), port: p2, env: { IK_TEST_ENGINE_VAR: "x" } },
        // A worker that outlives its leader (sleep stays in the group after the mock exits): only a
        // signal to the whole group ends it without waiting for the SIGKILL escalation.
        { label: "slow", name: "llama.cpp", launch: ["bash", "-c", `sleep 600 & exec ${mock("llamacpp", p3, tpot.slow, "llamacpp", ["--spawn-child"]).join(" ")}`], port: p3, ready_check: "health" },
      ],
    };
    await writeFile(join(dir, "three.json"), JSON.stringify(manifest));
    const r = await runIk(["bench", "rounds", join(dir, "three.json"), "--prompts", join(dir, "two.jsonl"), "--serve-args", "--max-tokens 16 --warmup 0",
      "--run-dir", run, "--gpu-lock", join(dir, "lock"), "--stop-timeout-s", "5", "--json"], { env: { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key"), IK_SECRET_NOT_PASSED: "s3cret" }, timeoutMs: 170_000 });
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    const out = JSON.parse(r.stdout);
    const plan = await readJson(join(run, "rounds", "plan.json"));
    assert.equal(plan.rounds, 6);
    assert.equal(plan.design.period, 6);
    assert.equal(plan.design.balanced, true);
    assert.deepEqual(plan.design.orders, roundOrders(["fast", "mid", "slow"], 6).orders);
    assert.match(plan.manifest_sha256, /^[0-9a-f]{64}$/);
    const summary = await readJson(join(run, "rounds", "summary.json"));
    assert.deepEqual(summary.summary, out.summary);
    // --json prints summary.json's content (its cells included) and the folder.
    assert.deepEqual({ ...out, out_dir: undefined }, { ...summary, out_dir: undefined });
    assert.equal(out.cells.length, 18);
    // The cells ran in the plan's order (t_start increasing along rounds and positions).
    const cells = [];
    for (let k = 1; k <= 6; k++) {
      for (const label of plan.design.orders[k - 1]) {
        const c = await readJson(join(run, "rounds", `${label}.r${k}.json`));
        assert.equal(c.status, "ok", `${label} r${k}: ${c.detail}`);
        assert.equal(c.position, plan.design.orders[k - 1].indexOf(label));
        cells.push(c);
      }
    }
    for (let i = 1; i < cells.length; i++) assert.ok(cells[i].t_start >= cells[i - 1].t_end, "cells ran one at a time, in order");
    // Single mode chains --extend: round k's cell reads round k-1 (from 0) of the engine's record.
    const midR3 = cells.find((c) => c.label === "mid" && c.round === 3);
    assert.match(midR3.metrics_source, /round 2 /);
    assert.ok(midR3.serve.argv.includes("--extend"));
    // Clean environment: the manifest env and the basics, never ik's other variables.
    assert.ok(midR3.env.keys.includes("IK_TEST_ENGINE_VAR"));
    assert.ok(!midR3.env.keys.includes("IK_SECRET_NOT_PASSED"));
    assert.ok(!midR3.env.keys.includes("IK_RUNS_DIR"));
    const row = (engine: string, metric: string) => summary.summary.rows.find((x: { engine: string; bucket: string; metric: string }) => x.engine === engine && x.bucket === "all" && x.metric === metric);
    for (const [engine, truth] of [["mid", 0.85], ["slow", 0.7]] as const) {
      const d = row(engine, "decode_tok_s");
      assert.equal(d.best, "fast");
      assert.equal(d.n_pairs, 6);
      assert.ok(d.ratio_ci95[1] < 1, `${engine} decode ratio CI ${d.ratio_ci95} excludes 1`);
      assert.ok(Math.abs(d.ratio_to_best / truth - 1) < 0.02, `${engine} decode ratio ${d.ratio_to_best} vs ${truth}`);
      const t = row(engine, "tpot_ms");
      assert.ok(t.ratio_ci95[0] > 1, `${engine} tpot ratio CI ${t.ratio_ci95} excludes 1`);
      assert.ok(Math.abs(t.ratio_to_best * truth - 1) < 0.02, `${engine} tpot ratio ${t.ratio_to_best} vs ${1 / truth}`);
    }
    assert.equal(row("fast", "decode_tok_s").ratio_to_best, 1);
    // Resolved configs from the three startup-log formats; the expect gate passes.
    assert.equal(summary.resolved_config.fast.status, "RESOLVED");
    assert.deepEqual(summary.resolved_config.fast.violations, []);
    for (const l of ["mid", "slow"]) assert.equal(summary.resolved_config[l].status, "RESOLVED", l);
    const rc = await readJson(join(run, "resolved_config", "fast.r1.json"));
    assert.equal(rc.config.max_num_seqs, 256);
    const md = await readFile(join(run, "rounds", "summary.md"), "utf8");
    assert.match(md, /\| fast \(best\) \| all \| decode_tok_s \|/);
    assert.doesNotMatch(md, /^\| \w+[^|\n]*\[(HARD GATE|FAILURES)\]/m);
    assert.match(await readFile(join(run, "logs", "slow.r1.log"), "utf8"), /n_slots|n_ctx_slot/);
    // Metrics before/after were scraped and differenced.
    const fastR1 = cells.find((c) => c.label === "fast" && c.round === 1);
    assert.equal(fastR1.prometheus.available, true);
    assert.ok(Object.keys(fastR1.prometheus.counters).length > 0);
    await readFile(join(run, "prometheus", "fast.r1.before.txt"), "utf8");
    // The grandchild of every slow cell went with its group; no engine outlived the run.
    for (const c of cells) {
      assert.equal(c.stop.group_gone, true);
      assert.equal(c.stop.signal, "SIGTERM", "SIGTERM to the group was enough: no member needed SIGKILL");
      assert.deepEqual(runtime.groupMembers(c.pid), [], `${c.label} r${c.round} group ${c.pid}`);
    }
    assert.deepEqual(survivors(marker), []);
    assert.match(r.stderr, /round 6\/6/);
  });

  test("broken engines get their statuses in a separate short run; the run exits 1 and keeps every cell (~25 s)", async () => {
    const ik = ikBin();
    const marker = `rounds-broken-${process.pid}`;
    const ports = await freePorts(8);
    const busy = createServer();
    await new Promise<void>((ok) => busy.listen(ports[0], "127.0.0.1", ok));
    const m = (port: number, ...extra: string[]) => [ik, "mock", "--engine", extra.includes("--metrics") ? "llamacpp" : "vllm", "--port", String(port), "--tpot-ms", "2", "--model", marker, ...extra];
    const manifest = {
      engines: [
        { label: "busy", name: "vllm", launch: m(ports[0]), port: ports[0] },
        { label: "nolaunch", name: "vllm", launch: [join(dir, "no-such-engine"), "--port", String(ports[1])], port: ports[1] },
        { label: "slowstart", name: "vllm", launch: m(ports[2], "--startup-delay-s", "30"), port: ports[2] },
        { label: "dies", name: "vllm", launch: m(ports[3], "--startup-delay-s", "5", "--exit-after-s", "0.3"), port: ports[3] },
        { label: "badwarm", name: "vllm", launch: m(ports[4], "--fault", "http500"), port: ports[4] },
        { label: "nometrics", name: "llama.cpp", launch: m(ports[5], "--metrics", "off", "--spawn-child"), port: ports[5], expect: { n_slots: 4 } },
        { label: "gated", name: "vllm", launch: m(ports[7], "--startup-log", "vllm"), port: ports[7], expect: { max_num_seqs: 128, enable_prefix_caching: "True" } },
        // Ignores SIGTERM (the ignore survives exec of `sleep`): stopped by SIGKILL after --stop-timeout-s.
        { label: "stubborn", name: "vllm", launch: ["bash", "-c", `trap '' TERM; ${m(ports[6]).join(" ")} & while true; do sleep 0.2; done`], port: ports[6] },
      ],
    };
    await writeFile(join(dir, "broken.json"), JSON.stringify(manifest));
    const run = join(dir, "broken");
    try {
      const r = await runIk(["bench", "rounds", join(dir, "broken.json"), "--prompts", join(dir, "two.jsonl"), "--rounds", "1", "--serve-args", "--max-tokens 4 --warmup 0",
        "--run-dir", run, "--gpu-lock", join(dir, "lock2"), "--startup-timeout-s", "2", "--stop-timeout-s", "1", "--poll-s", "0.1"], { env: { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") }, timeoutMs: 120_000 });
      assert.equal(r.code, 1, r.stderr.slice(-3000));
      const cell = (l: string) => readJson(join(run, "rounds", `${l}.r1.json`));
      assert.equal((await cell("busy")).status, "port_busy");
      const nl = await cell("nolaunch");
      assert.equal(nl.status, "launch_failed");
      assert.match(nl.detail, /no-such-engine/);
      const ss = await cell("slowstart");
      assert.equal(ss.status, "startup_timeout");
      assert.equal(ss.ready.status, "timeout");
      const d = await cell("dies");
      assert.equal(d.status, "exited_early");
      assert.match(d.detail, /exit code 1/);
      assert.equal(typeof d.log_tail, "string");
      assert.equal((await cell("badwarm")).status, "warmup_failed");
      const nm = await cell("nometrics");
      assert.equal(nm.status, "ok", nm.detail);
      assert.equal(nm.prometheus.available, false);
      assert.match(nm.prometheus.before_note, /not available: HTTP 501/);
      assert.equal(nm.stop.group_gone, true);
      assert.deepEqual(nm.resolved_config.violations, [], "no startup log: nothing contradicts, n_slots is unverified");
      assert.deepEqual(nm.resolved_config.unverified, ["n_slots"]);
      assert.equal(nm.resolved_config.status, "UNPROVEN");
      const st = await cell("stubborn");
      assert.equal(st.status, "ok", st.detail);
      assert.equal(st.stop.signal, "SIGKILL");
      assert.equal(st.stop.group_gone, true);
      for (const c of [d, nm, st]) assert.deepEqual(runtime.groupMembers(c.pid), []);
      const g = await cell("gated");
      assert.equal(g.status, "hard_gate", "an expect violation makes the cell not comparable (issue 18)");
      assert.deepEqual(g.resolved_config.violations, ["[HARD GATE] max_num_seqs: expected 128, resolved 256"]);
      const md = await readFile(join(run, "rounds", "summary.md"), "utf8");
      assert.match(md, /^\| gated[^|\n]*\[HARD GATE\] \| all \| decode_tok_s/m);
      assert.match(md, /## Failed cells/);
      for (const s of ["port_busy", "launch_failed", "startup_timeout", "exited_early", "warmup_failed"]) assert.match(md, new RegExp(`\\| ${s} \\|`));
      // serve_failed: an engine whose every request fails, with no warm-up to catch it first.
      const r2 = await runIk(["bench", "rounds", join(dir, "broken.json"), "--engines", "badwarm", "--prompts", join(dir, "two.jsonl"), "--rounds", "1", "--warmup", "0",
        "--serve-args", "--max-tokens 4 --warmup 0", "--run-dir", join(dir, "broken2"), "--gpu-lock", join(dir, "lock2")], { env: { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") }, timeoutMs: 60_000 });
      assert.equal(r2.code, 1, r2.stderr.slice(-2000));
      const sf = await readJson(join(dir, "broken2", "rounds", "badwarm.r1.json"));
      assert.equal(sf.status, "serve_failed");
      assert.match(sf.detail, /all 2 requests failed/);
      assert.deepEqual(survivors(marker), []);
    } finally {
      await new Promise((ok) => busy.close(ok));
    }
  });
  test("usage, manifest and lock errors are one line with 64/65/69 before any engine starts (~3 s)", async () => {
    const env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    await writeFile(join(dir, "bad.json"), JSON.stringify({ engines: [{ label: "a b", launch: "vllm serve", port: "x" }, { name: "vllm", launch: ["x"], port: 1, env: { OK: 1, bad: { nested: true } } }] }));
    const bad = await runIk(["bench", "rounds", join(dir, "bad.json"), "--gpu-lock", join(dir, "lockE")], { env, timeoutMs: 30_000 });
    assert.equal(bad.code, 65, bad.stderr);
    const line = bad.stderr.trim().split("\n");
    assert.equal(line.length, 1, bad.stderr);
    for (const want of [/launch/, /port/, /label/, /bad\.json/]) assert.match(line[0], want);
    await writeFile(join(dir, "one.json"), JSON.stringify({ engines: [{ label: "x", name: "vllm", launch: ["true"], port: 1 }, { label: "y", name: "vllm", launch: ["true"], port: 2 }] }));
    const unknown = await runIk(["bench", "rounds", join(dir, "one.json"), "--engines", "x,zz", "--gpu-lock", join(dir, "lockE")], { env, timeoutMs: 30_000 });
    assert.equal(unknown.code, 64, unknown.stderr);
    assert.match(unknown.stderr, /--engines.*zz.*x, y/);
    const ci = await runIk(["bench", "rounds", join(dir, "one.json"), "--mode", "load", "--ci-target", "0.05", "--gpu-lock", join(dir, "lockE")], { env, timeoutMs: 30_000 });
    assert.equal(ci.code, 64, ci.stderr);
    const reserved = await runIk(["bench", "rounds", join(dir, "one.json"), "--serve-args", "--rounds 5", "--gpu-lock", join(dir, "lockE")], { env, timeoutMs: 30_000 });
    assert.equal(reserved.code, 64, reserved.stderr);
    assert.match(reserved.stderr, /--serve-args.*--rounds/);
    // Flags or values bench serve would refuse in every cell are refused before any engine launches.
    for (const [args, want] of [["--frob", /Unexpected option or argument: "--frob"/], ["--max-tokens abc", /--max-tokens.*"abc"/]] as const) {
      const refused = await runIk(["bench", "rounds", join(dir, "one.json"), "--serve-args", args, "--gpu-lock", join(dir, "lockE")], { env, timeoutMs: 30_000 });
      assert.equal(refused.code, 64, refused.stderr);
      assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
      assert.match(refused.stderr, /^ik: --serve-args: ik bench serve refuses them: /);
      assert.match(refused.stderr, want);
    }
    const conflict = await runIk(["bench", "rounds", join(dir, "one.json"), "--extra-body", '{"a":1}', "--serve-args", "--extra-body '{\"a\":2}'", "--gpu-lock", join(dir, "lockE")], { env, timeoutMs: 30_000 });
    assert.equal(conflict.code, 64, conflict.stderr);
    assert.match(conflict.stderr, /give one value/);
    // A lock held by a live process (this test's own pid).
    await writeFile(join(dir, "held.lock"), JSON.stringify({ pid: process.pid, command: "another ik bench rounds", started_utc: new Date().toISOString() }));
    const held = await runIk(["bench", "rounds", join(dir, "one.json"), "--gpu-lock", join(dir, "held.lock")], { env, timeoutMs: 30_000 });
    assert.equal(held.code, 69, held.stderr);
    assert.match(held.stderr, new RegExp(`${process.pid}`));
    assert.equal(existsSync(join(dir, "rounds")), false, "nothing ran");
  });

  test("SIGINT: exit 130, the running cell's engine stopped, its record marked incomplete, finished cells kept (~8 s)", async () => {
    const ik = ikBin();
    const marker = `rounds-int-${process.pid}`;
    const [p1, p2] = await freePorts(2);
    const eng = (port: number) => [ik, "mock", "--engine", "vllm", "--port", String(port), "--tpot-ms", "5", "--model", marker];
    await writeFile(join(dir, "int.json"), JSON.stringify({ engines: [{ label: "a", name: "vllm", launch: eng(p1), port: p1 }, { label: "b", name: "vllm", launch: eng(p2), port: p2 }] }));
    const run = join(dir, "int");
    const child = spawn(ik, ["bench", "rounds", join(dir, "int.json"), "--prompts", join(dir, "two.jsonl"), "--rounds", "2", "--serve-args", "--max-tokens 400 --warmup 0",
      "--run-dir", run, "--gpu-lock", join(dir, "lockI")], { env: { ...runtime.envAll(), IK_RUNS_DIR: join(dir, "runs-int"), IK_KEY_FILE: join(dir, "key") }, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr!.on("data", (d) => (err += d));
    const done = new Promise<number | null>((ok) => child.on("close", (code) => ok(code)));
    const t0 = Date.now();
    while (!/round 1\/2 · a: ok/.test(err) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 100));
    assert.match(err, /round 1\/2 · a: ok/);
    await new Promise((r) => setTimeout(r, 1500)); // b is measuring now (2 requests of 400 tokens at 5 ms take ~4 s)
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await done;
    clearTimeout(timer);
    assert.equal(code, 130, err.slice(-2000));
    const plan = await readJson(join(run, "rounds", "plan.json"));
    assert.equal(plan.interrupted.after_cells, 2);
    assert.equal((await readJson(join(run, "rounds", "a.r1.json"))).status, "ok");
    const b = await readJson(join(run, "rounds", "b.r1.json"));
    assert.equal(b.status, "interrupted");
    assert.equal(b.stop.group_gone, true);
    assert.equal(b.serve.complete, false);
    const rec = await readJson(join(dir, "runs-int", b.serve.evidence_id, "evidence.json"));
    assert.equal(rec.complete, false);
    assert.equal(existsSync(join(run, "rounds", "a.r2.json")), false);
    assert.deepEqual(survivors(marker), []);
  });

  test("--ci-target stops after a whole period once the ratio CIs are narrow; the design is rewritten (~12 s)", async () => {
    const ik = ikBin();
    const [p1, p2] = await freePorts(2);
    const eng = (port: number, t: number) => [ik, "mock", "--engine", "vllm", "--port", String(port), "--tpot-ms", String(t)];
    // TPOT 10 vs 12 ms and a 10 % target: the stop must not hinge on the host's scheduling jitter
    // (at 5 vs 6 ms and 5 %, the Node build on a busy CI host ran all 8 rounds).
    await writeFile(join(dir, "ad.json"), JSON.stringify({ engines: [{ label: "a", name: "vllm", launch: eng(p1, 10), port: p1 }, { label: "b", name: "vllm", launch: eng(p2, 12), port: p2 }] }));
    const run = join(dir, "ad");
    const r = await runIk(["bench", "rounds", join(dir, "ad.json"), "--prompts", join(dir, "two.jsonl"), "--rounds", "8", "--ci-target", "0.1", "--min-rounds", "2",
      "--serve-args", "--max-tokens 16 --warmup 0", "--warmup", "0", "--run-dir", run, "--gpu-lock", join(dir, "lockA")], { env: { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") }, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const plan = await readJson(join(run, "rounds", "plan.json"));
    assert.equal(plan.adaptive.max_rounds, 8);
    assert.equal(plan.adaptive.period, 2);
    assert.ok(plan.stopped_early, `no early stop; checks: ${JSON.stringify(plan.adaptive.checks)}`);
    const k = plan.stopped_early.round;
    assert.ok(k % 2 === 0 && k < 8, `stopped at a whole period before the maximum: ${k}`);
    assert.equal(plan.rounds, k);
    assert.equal(plan.design.orders.length, k);
    assert.deepEqual(plan.adaptive.checks.map((c: { round: number }) => c.round), Array.from({ length: k / 2 }, (_, i) => 2 * (i + 1)));
    assert.equal(plan.adaptive.checks.at(-1).met, true);
    assert.equal(plan.adaptive.stopped_early, true);
    assert.equal(existsSync(join(run, "rounds", `a.r${k + 1}.json`)), false);
    assert.match(await readFile(join(run, "rounds", "summary.md"), "utf8"), new RegExp(`Adaptive stop: stopped early after round ${k} of at most 8`));
  });
  test("load mode: the first load cell's reference e2e is passed to every later cell, so every engine gets one schedule (~20 s)", async () => {
    const ik = ikBin();
    const [p1, p2] = await freePorts(2);
    const eng = (port: number, t: number) => [ik, "mock", "--engine", "vllm", "--port", String(port), "--max-batch", "8", "--step-ms", String(t)];
    await writeFile(join(dir, "load.json"), JSON.stringify({ engines: [{ label: "a", name: "vllm", launch: eng(p1, 5), port: p1 }, { label: "b", name: "vllm", launch: eng(p2, 7), port: p2 }] }));
    const run = join(dir, "load");
    const r = await runIk(["bench", "rounds", join(dir, "load.json"), "--mode", "load", "--prompts", join(dir, "two.jsonl"), "--rounds", "2", "--warmup", "1",
      "--serve-args", "--concurrency 1,2 --duration-s 1.5 --slo-ttft-p95-ms 2000 --max-tokens 16 --warmup 0 --gpu-price-usd-h 2", "--run-dir", run, "--gpu-lock", join(dir, "lockL"), "--json"],
      { env: { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") }, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const plan = await readJson(join(run, "rounds", "plan.json"));
    const first = plan.design.orders[0][0];
    const pilot = await readJson(join(run, "rounds", `${first}.r1.json`));
    const ref = pilot.load_schedule.ref_e2e_ms_used;
    assert.ok(ref > 0);
    assert.equal(pilot.serve.argv.includes("--ref-e2e-ms"), false, "the first cell measures it");
    assert.equal(plan.load_schedule.ref_e2e_ms, ref);
    assert.equal(plan.load_schedule.shared, true);
    assert.equal(plan.load_schedule.pilot, `${first} r1`);
    for (const [label, k] of [["a", 1], ["b", 1], ["a", 2], ["b", 2]] as const) {
      if (label === first && k === 1) continue;
      const c = await readJson(join(run, "rounds", `${label}.r${k}.json`));
      assert.equal(c.status, "ok");
      assert.equal(c.serve.argv[c.serve.argv.indexOf("--ref-e2e-ms") + 1], String(ref));
      assert.equal(c.load_schedule.ref_e2e_ms_used, ref);
      assert.ok(!c.serve.argv.includes("--rounds"));
    }
    const out = JSON.parse(r.stdout);
    const nStar = out.summary.rows.filter((x: { metric: string }) => x.metric === "n_star");
    assert.equal(nStar.length, 2);
    assert.ok(out.summary.rows.some((x: { metric: string }) => x.metric === "usd_per_1m_output_tokens_at_n_star"));
    assert.match(await readFile(join(run, "rounds", "summary.md"), "utf8"), /Arrival schedule: the same for every engine \(--ref-e2e-ms/);
  });
  test("GPU paths through the binary with a fake nvidia-smi on PATH: baseline before launch, the wait after the stop, the GPU named in the record (~6 s)", async () => {
    const ik = ikBin();
    const [port] = await freePorts(1);
    const bin = join(dir, "fake-bin");
    await mkdir(bin, { recursive: true });
    const calls = join(dir, "smi-calls");
    await writeFile(calls, "0");
    // The real formats of both queries ik makes; the engine's 30 GiB stay held for two readings after the stop.
    await writeFile(join(bin, "nvidia-smi"), `#!/bin/sh
case "$*" in
  *memory.used,name*)
    n=$(cat ${calls}); n=$((n+1)); echo $n > ${calls}
    if [ $n -ge 2 ] && [ $n -le 3 ]; then echo "30720, NVIDIA H200"; else echo "612, NVIDIA H200"; fi ;;
  *index,name,memory.total*) echo "0, NVIDIA H200, 143771, 612, 570.124.06, GPU-5d3c1f2e-0000-4000-8000-000000000001" ;;
  *) exit 9 ;;
esac
`);
    await chmod(join(bin, "nvidia-smi"), 0o755);
    await writeFile(join(dir, "gpu.json"), JSON.stringify({ engines: [{ label: "g", name: "vllm", launch: [ik, "mock", "--engine", "vllm", "--port", String(port), "--tpot-ms", "2"], port }] }));
    const run = join(dir, "gpu");
    const r = await runIk(["bench", "rounds", join(dir, "gpu.json"), "--prompts", join(dir, "two.jsonl"), "--rounds", "1", "--serve-args", "--max-tokens 4 --warmup 0",
      "--run-dir", run, "--gpu-lock", join(dir, "lockG"), "--poll-s", "0.1"], { env: { IK_RUNS_DIR: join(dir, "runs-gpu"), IK_KEY_FILE: join(dir, "key"), PATH: `${bin}:${runtime.env("PATH")}` }, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const c = await readJson(join(run, "rounds", "g.r1.json"));
    assert.equal(c.status, "ok");
    assert.equal(c.gpu_memory.skipped, false);
    assert.equal(c.gpu_memory.ok, true);
    assert.deepEqual(c.gpu_memory.baseline, [612]);
    assert.deepEqual(c.gpu_memory.last, [612]);
    assert.ok(c.gpu_memory.waitedMs > 0, "it waited while the memory was still held");
    const rec = await readJson(join(dir, "runs-gpu", c.serve.evidence_id, "evidence.json"));
    assert.match(JSON.stringify(rec.identity), /NVIDIA H200/);
  });
});
