/**
 * `ik bench points` and `ik load-trial` through dist/ik (Bun only: end-to-end):
 * - 3 points whose client is `{ik} load-trial run` against `ik mock` as the router: /state shows the
 *   load, the middle point fails attainment (exit 2 recorded) and the third never runs (~15 s);
 * - every stop condition against a scripted router in this process: preflight (69), readiness
 *   refused, model mismatch, initial and final drain timeouts, a non-zero client exit (still
 *   drained), a client timeout; drain from Prometheus gauges; a malformed plan (65); an existing
 *   output folder (64) (~15 s).
 */
import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime, type Served } from "../../lib/runtime/mod.ts";

const BUN = runtime.name === "bun";
let dir: string;
const env = () => ({ IK_KEY_FILE: join(dir, "key"), IK_RUNS_DIR: join(dir, "runs") });
const readJson = async (p: string) => JSON.parse(await readFile(p, "utf8"));

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-points-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("bench points through the binary", { skip: BUN ? false : "Bun only (end-to-end; CONTRACTS.md CI time)" }, () => {
  let mock: MockProc;
  before(async () => {
    mock = await startMock(["--max-batch", "2", "--step-ms", "5"]);
  });
  after(async () => {
    await mock.stop();
  });

  test("3 load-trial points against ik mock as router: /state shows the load, the middle one fails attainment, the third never runs (~15 s)", async () => {
    const prep = await runIk(["load-trial", "prepare", "--out", join(dir, "lt"), "--synth", "16:24", "--synth", "32:12", "--requests", "40", "--json"], { env: env() });
    assert.equal(prep.code, 0, prep.stderr);
    const w = JSON.parse(prep.stdout).path;
    assert.equal(existsSync(w), true);
    const again = await runIk(["load-trial", "prepare", "--out", join(dir, "lt"), "--synth", "16:24"], { env: env() });
    assert.equal(again.code, 64, "a workload is never overwritten");
    const pt = (id: string, rate: number, n: number, ttft: string) => ({
      id, workload: { file: w, rate_rps: rate, requests: n }, client_timeout_s: 60, drain_timeout_s: 15,
      client_argv: ["{ik}", "load-trial", "run", "--base", "{base}", "--expected-model", "{model}", "--workload", w, "--rate", String(rate), "--requests", String(n),
        "--ttft", ttft, "--tpot", "0.05", "--attainment", "0.9", "--out", "{point_dir}/client"],
    });
    await writeFile(join(dir, "plan.json"), JSON.stringify({ schema: 1, points: [pt("low", 4, 16, "2"), pt("tight", 8, 16, "0.001"), pt("never", 8, 16, "2")] }));
    const out = join(dir, "out");
    const r = await runIk(["bench", "points", "--base", mock.base, "--model", "mock-model", "--plan", join(dir, "plan.json"), "--out", out, "--poll-s", "0.05", "--json"], { env: env(), timeoutMs: 90_000 });
    assert.equal(r.code, 1, r.stderr);
    const o = JSON.parse(r.stdout);
    assert.deepEqual(o.points.map((p: { id: string; status: string }) => [p.id, p.status]), [["low", "ok"], ["tight", "attainment_failed"], ["never", "not_run"]]);
    const low = await readJson(join(out, "low", "result.json"));
    assert.equal(low.status, "ok");
    assert.equal(low.client.exit_code, 0);
    assert.ok(low.state_during.samples > 3);
    assert.ok(low.state_during.max_resident >= 1, "/state reflected the running requests");
    assert.equal(low.drain_initial.drained, true);
    assert.equal(low.drain_final.drained, true);
    assert.deepEqual(low.last_state.raw, { admission: 0, resident: 0 });
    const sum = await readJson(join(out, "low", "client", "summary.json"));
    assert.equal(sum.passed, true);
    assert.equal(sum.requested, 16);
    assert.equal(sum.validity.sent, 16);
    const rows = (await readFile(join(out, "low", "client", "requests.jsonl"), "utf8")).trim().split("\n");
    assert.equal(rows.length, 16);
    const tight = await readJson(join(out, "tight", "result.json"));
    assert.equal(tight.client.exit_code, 2);
    assert.equal(tight.client.meaning, "attainment or scheduling failed; inspect summary.json");
    assert.equal(tight.drain_final.drained, true, "a non-zero exit still gets its drain");
    const ts = await readJson(join(out, "tight", "client", "summary.json"));
    assert.equal(ts.attained, false);
    assert.equal(ts.valid, true);
    assert.equal(existsSync(join(out, "never")), false);
    const m = await readJson(join(out, "manifest.json"));
    assert.match(m.plan_sha256, /^[0-9a-f]{64}$/);
    assert.equal(m.runner_digest.of, "binary");
    assert.match(m.runner_digest.sha256, /^[0-9a-f]{64}$/);
    assert.match(m.base_url, /^hmac-sha256:/);
    assert.ok(!JSON.stringify(m).includes(String(mock.port)), "the URL is stored only as an HMAC");
    assert.equal(statSync(out).mode & 0o777, 0o700);
    assert.equal(statSync(join(out, "manifest.json")).mode & 0o777, 0o600);
    const exists = await runIk(["bench", "points", "--base", mock.base, "--model", "mock-model", "--plan", join(dir, "plan.json"), "--out", out], { env: env() });
    assert.equal(exists.code, 64, "an existing output folder is refused");
  });

  test("every stop condition against a scripted router; drain from metrics; a malformed plan is 65 (~15 s)", async () => {
    // The router's behaviour per call: readiness refusals, model lists, outstanding work.
    let flagPath = "";
    const script = { readyFrom: Infinity, readyCalls: 0, modelFrom: Infinity, modelCalls: 0, busy: false, busyAfterClient: false, stateOk: true };
    const ac = new AbortController();
    const served: Served = await runtime.serve((req) => {
      const path = new URL(req.url).pathname;
      if (path === "/ready") return new Response(++script.readyCalls >= script.readyFrom ? "no" : "ok", { status: script.readyCalls >= script.readyFrom ? 503 : 200 });
      if (path === "/v1/models") {
        const id = ++script.modelCalls >= script.modelFrom ? "other-model" : "m";
        return Response.json({ object: "list", data: [{ id, object: "model", owned_by: "vllm" }] });
      }
      if (flagPath && existsSync(flagPath)) script.busy = true;
      if (path === "/state") return script.stateOk ? Response.json({ admission: script.busy ? 2 : 0, resident: script.busy ? 1 : 0 }) : new Response("nope", { status: 404 });
      if (path === "/metrics") return new Response(`# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} ${script.busy ? 1 : 0}\nsglang:num_queue_reqs 0\n`);
      return new Response("not found", { status: 404 });
    }, { hostname: "127.0.0.1", port: 0, signal: ac.signal });
    const base = `http://127.0.0.1:${served.port}`;
    const flag = join(dir, "busy-flag");
    const pts = (argv2: string[], timeout = 20) => [
      { id: "a", workload: { file: "w", rate_rps: 1, requests: 1 }, client_argv: ["true"], client_timeout_s: 20, drain_timeout_s: 1 },
      { id: "b", workload: { file: "w", rate_rps: 1, requests: 1 }, client_argv: argv2, client_timeout_s: timeout, drain_timeout_s: 1 },
      { id: "c", workload: { file: "w", rate_rps: 1, requests: 1 }, client_argv: ["true"], client_timeout_s: 20, drain_timeout_s: 1 },
    ];
    let n = 0;
    const run = async (points: unknown[], extra: string[] = []) => {
      const p = join(dir, `plan-${++n}.json`);
      await writeFile(p, JSON.stringify({ schema: 1, points }));
      const out = join(dir, `stop-${n}`);
      const r = await runIk(["bench", "points", "--base", base, "--model", "m", "--plan", p, "--out", out, "--poll-s", "0.05", "--json", ...extra], { env: env(), timeoutMs: 60_000 });
      return { r, out, o: r.stdout ? JSON.parse(r.stdout) : null };
    };
    const reset = () => Object.assign(script, { readyFrom: Infinity, readyCalls: 0, modelFrom: Infinity, modelCalls: 0, busy: false, stateOk: true });
    try {
      // Every point runs: 0.
      let x = await run(pts(["true"]));
      assert.equal(x.r.code, 0, x.r.stderr);
      assert.deepEqual(x.o.points.map((p: { status: string }) => p.status), ["ok", "ok", "ok"]);
      // Preflight: readiness, model, drain source; 69 and nothing run.
      reset();
      script.readyFrom = 1;
      x = await run(pts(["true"]));
      assert.equal(x.r.code, 69, x.r.stderr);
      assert.equal(x.o.status, "preflight_failed");
      assert.equal(existsSync(join(x.out, "a")), false);
      reset();
      script.stateOk = false;
      x = await run(pts(["true"]));
      assert.equal(x.r.code, 69);
      assert.match(x.o.reason, /drain source state \/state: \/state: HTTP 404/);
      reset();
      script.modelFrom = 1;
      x = await run(pts(["true"]));
      assert.equal(x.r.code, 69);
      assert.match(x.o.reason, /'m' is not served.*other-model/);
      assert.match(x.r.stderr, /^ik: bench points: preflight failed: model: .*'m' is not served.*; no point ran: fix the fleet or the flags/m);
      assert.equal(x.r.stderr.match(/preflight failed/g)?.length, 1, `said once: ${x.r.stderr}`);
      // Readiness refused at point b (preflight = call 1, a = 2, b = 3).
      reset();
      script.readyFrom = 3;
      x = await run(pts(["true"]));
      assert.equal(x.r.code, 1);
      assert.deepEqual(x.o.points.map((p: { status: string }) => p.status), ["ok", "readiness_refused", "not_run"]);
      // Model mismatch at point b.
      reset();
      script.modelFrom = 3;
      x = await run(pts(["true"]));
      assert.deepEqual(x.o.points.map((p: { status: string }) => p.status), ["ok", "model_mismatch", "not_run"]);
      // A non-zero client exit stops the run but is still drained.
      reset();
      x = await run(pts(["sh", "-c", "echo out; echo err >&2; exit 3"]));
      assert.equal(x.r.code, 1);
      assert.deepEqual(x.o.points.map((p: { status: string }) => p.status), ["ok", "client_failed", "not_run"]);
      const b = await readJson(join(x.out, "b", "result.json"));
      assert.equal(b.client.exit_code, 3);
      assert.equal(b.drain_final.drained, true);
      assert.equal(await readFile(join(x.out, "b", "client.stdout"), "utf8"), "out\n");
      assert.equal(await readFile(join(x.out, "b", "client.stderr"), "utf8"), "err\n");
      // A client past its timeout is killed and stops the run.
      reset();
      x = await run(pts(["sleep", "30"], 1));
      assert.deepEqual(x.o.points.map((p: { status: string }) => p.status), ["ok", "client_timeout", "not_run"]);
      assert.equal((await readJson(join(x.out, "b", "result.json"))).client.timed_out, true);
      // Drain timeout after the client: the client leaves work behind (the router stays busy).
      reset();
      await rm(flag, { force: true });
      flagPath = flag;
      try {
        x = await run(pts(["sh", "-c", `touch ${flag}`]));
        assert.deepEqual(x.o.points.map((p: { status: string }) => p.status), ["ok", "drain_timeout", "not_run"]);
        const bd = await readJson(join(x.out, "b", "result.json"));
        assert.equal(bd.drain_initial.drained, true);
        assert.equal(bd.drain_final.drained, false);
        assert.deepEqual(bd.last_state.raw, { admission: 2, resident: 1 });
        // Initial drain timeout: the fleet is still busy before the first point (preflight only asks that the source answers).
        x = await run(pts(["true"]));
        assert.equal(x.r.code, 1, x.r.stderr);
        assert.deepEqual(x.o.points.map((p: { status: string }) => p.status), ["drain_timeout", "not_run", "not_run"]);
        assert.equal((await readJson(join(x.out, "a", "result.json"))).drain_initial.drained, false);
        assert.equal(existsSync(join(x.out, "a", "client.stdout")), false, "the client never started");
      } finally {
        flagPath = "";
        await rm(flag, { force: true });
      }
      // Drain from Prometheus gauges (every known running/waiting gauge summed).
      reset();
      x = await run(pts(["true"]), ["--drain-source", "metrics"]);
      assert.equal(x.r.code, 0, x.r.stderr);
      const m = await readJson(join(x.out, "manifest.json"));
      assert.match(m.preflight.drain.note, /summed sglang:num_queue_reqs, vllm:num_requests_running/);
      // An interrupt while the client runs, the client deaf to SIGINT: ik insists (SIGTERM, SIGKILL)
      // within its grace, keeps the point's files, and calls the run and the point interrupted (130).
      reset();
      const p1 = join(dir, "plan-int.json");
      await writeFile(p1, JSON.stringify({ schema: 1, points: pts(["sh", "-c", "trap '' INT; echo started; sleep 30"], 60) }));
      const intOut = join(dir, "stop-int");
      const ik1 = startArgv([ikBin()], ["bench", "points", "--base", base, "--model", "m", "--plan", p1, "--out", intOut, "--poll-s", "0.05", "--json"], { env: env() });
      await ik1.waitFor(/point b: client running/, 30_000);
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      const e1 = await ik1.stop("SIGINT");
      assert.equal(e1.code, 130, ik1.stderr());
      assert.ok(Date.now() - t0 < 9_500, `took ${Date.now() - t0} ms`);
      const o1 = JSON.parse(ik1.stdout());
      assert.equal(o1.status, "interrupted");
      assert.deepEqual(o1.points.map((q: { status: string }) => q.status), ["ok", "interrupted", "not_run"]);
      const rb = await readJson(join(intOut, "b", "result.json"));
      assert.equal(rb.status, "interrupted");
      assert.equal(await readFile(join(intOut, "b", "client.stdout"), "utf8"), "started\n");
      assert.equal((await readJson(join(intOut, "manifest.json"))).outcome.status, "interrupted");
      // An interrupt while waiting for the fleet to drain before a point is no drain timeout.
      reset();
      script.busy = true;
      const p2 = join(dir, "plan-int2.json");
      await writeFile(p2, JSON.stringify({ schema: 1, points: pts(["true"]).map((q) => ({ ...q, drain_timeout_s: 30 })) }));
      const ik2 = startArgv([ikBin()], ["bench", "points", "--base", base, "--model", "m", "--plan", p2, "--out", join(dir, "stop-int2"), "--poll-s", "0.05", "--json"], { env: env() });
      await ik2.waitFor(/point 1\/3 a: checking readiness/, 30_000);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await ik2.stop("SIGINT")).code, 130, ik2.stderr());
      const ra = await readJson(join(dir, "stop-int2", "a", "result.json"));
      assert.equal(ra.status, "interrupted", JSON.stringify(ra));
      assert.match(ra.stop_reason, /interrupted while waiting for the fleet to drain/);
      // A point id that names the runner's own file is refused with the plan (65), nothing run.
      const p3 = join(dir, "plan-reserved.json");
      await writeFile(p3, JSON.stringify({ schema: 1, points: [{ ...pts(["true"])[0], id: "manifest.json" }] }));
      const rsv = await runIk(["bench", "points", "--base", base, "--model", "m", "--plan", p3, "--out", join(dir, "never-made-2")], { env: env() });
      assert.equal(rsv.code, 65, rsv.stderr);
      assert.match(rsv.stderr, /point 'manifest\.json': id 'manifest\.json' names a file of the output folder/);
      // ik's executable replaced on disk while it runs (a rebuild, an upgrade): {ik} still runs the same build.
      reset();
      const copyDir = join(dir, "bin");
      await mkdir(copyDir, { recursive: true });
      const copy = join(copyDir, "ik");
      await copyFile(ikBin(), copy);
      await chmod(copy, 0o755);
      const p4 = join(dir, "plan-replaced.json");
      await writeFile(p4, JSON.stringify({ schema: 1, points: [
        { ...pts(["true"])[0], client_argv: ["sh", "-c", "sleep 1.5"] },
        { ...pts(["true"])[0], id: "b", client_argv: ["{ik}", "--version"] },
      ] }));
      const ik4 = startArgv([copy], ["bench", "points", "--base", base, "--model", "m", "--plan", p4, "--out", join(dir, "stop-replaced"), "--poll-s", "0.05", "--json"], { env: env() });
      await ik4.waitFor(/point a: client running/, 30_000);
      // The new file at that path is another program: {ik} must still run the one that is running.
      await writeFile(`${copy}.new`, "#!/bin/sh\necho replaced\n", { mode: 0o755 });
      await rename(`${copy}.new`, copy);
      const e4 = await ik4.exited;
      assert.equal(e4.code, 0, ik4.stderr());
      assert.match(await readFile(join(dir, "stop-replaced", "b", "client.stdout"), "utf8"), /^ik /);
      // A malformed plan: one line, 65, nothing created.
      await writeFile(join(dir, "bad-plan.json"), JSON.stringify({ schema: 1, points: [{ id: "x", workload: { file: "w", rate_rps: -1, requests: 1 }, client_argv: ["true"], client_timeout_s: 1, drain_timeout_s: 1 }] }));
      const bad = await runIk(["bench", "points", "--base", base, "--model", "m", "--plan", join(dir, "bad-plan.json"), "--out", join(dir, "never-made")], { env: env() });
      assert.equal(bad.code, 65);
      assert.equal(bad.stderr.trim().split("\n").length, 1);
      assert.match(bad.stderr, /bad-plan\.json.*point 'x': workload.rate_rps/);
      assert.equal(existsSync(join(dir, "never-made")), false);
    } finally {
      ac.abort();
      await served.close();
    }
  });
});
