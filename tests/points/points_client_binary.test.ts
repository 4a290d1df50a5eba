/**
 * `ik bench points` through dist/ik, the client's own ways of ending (Bun only: end-to-end, ~10 s),
 * against a scripted router in this process (/ready, /v1/models, /state busy while a flag file
 * exists):
 * - a client that cannot be executed (no `#!` line): client_failed with its files and a drain, the
 *   manifest's outcome written, exit 1 (it was an internal error, 70, with no result.json);
 * - a client that exits 0 leaving a process that holds its stdout: ok, timed from its exit, the
 *   leftover stopped and noted (it was a client_timeout);
 * - an interrupt during the final drain after the client exited 2: interrupted, the client's
 *   attainment_failed kept beside it;
 * - the plan: an empty program, an unknown workload field, an ik load-trial client's missing workload
 *   file (65, before the preflight); description and notes kept in the manifest's plan.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { runtime, type Served } from "../../lib/runtime/mod.ts";

const BUN = runtime.name === "bun";
let dir: string;
let served: Served;
const ac = new AbortController();
let base = "";
const env = () => ({ IK_KEY_FILE: join(dir, "key"), IK_RUNS_DIR: join(dir, "runs") });
const readJson = async (p: string) => JSON.parse(await readFile(p, "utf8"));
const busyFlag = () => join(dir, "busy");

describe("bench points: how the client ends (dist/ik)", { skip: BUN ? false : "Bun only (end-to-end; CONTRACTS.md CI time)" }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-points-client-"));
    served = await runtime.serve((req) => {
      const path = new URL(req.url).pathname;
      if (path === "/ready") return new Response("ok");
      if (path === "/v1/models") return Response.json({ object: "list", data: [{ id: "m", object: "model" }] });
      const busy = existsSync(busyFlag());
      if (path === "/state") return Response.json({ admission: 0, resident: busy ? 1 : 0 });
      return new Response("not found", { status: 404 });
    }, { hostname: "127.0.0.1", port: 0, signal: ac.signal });
    base = `http://127.0.0.1:${served.port}`;
  });
  after(async () => {
    ac.abort();
    await rm(dir, { recursive: true, force: true });
  });
  let n = 0;
  const point = (argv: string[], more: Record<string, unknown> = {}) => ({
    id: "a", workload: { file: "w", rate_rps: 1, requests: 1 }, client_argv: argv, client_timeout_s: 20, drain_timeout_s: 20, ...more,
  });
  const plan = async (points: unknown[], top: Record<string, unknown> = {}) => {
    const p = join(dir, `plan-${++n}.json`);
    await writeFile(p, JSON.stringify({ schema: 1, points, ...top }));
    return p;
  };
  const args = (p: string, out: string) => ["bench", "points", "--base", base, "--model", "m", "--plan", p, "--out", out, "--poll-s", "0.05", "--json"];

  test("a client that cannot be executed is a failed client: its files, a drain, the manifest's outcome, exit 1", async () => {
    const script = join(dir, "noshebang.sh");
    await writeFile(script, "echo hi\n");
    await chmod(script, 0o755);
    const out = join(dir, "o1");
    const r = await runIk(args(await plan([point([script])]), out), { env: env(), timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr);
    const res = await readJson(join(out, "a", "result.json"));
    assert.equal(res.status, "client_failed");
    assert.equal(res.client.exit_code, 127);
    assert.match(res.client.spawn_error, /could not start the client/);
    assert.equal(res.drain_final.drained, true, "the failed client still gets its drain");
    assert.match(await readFile(join(out, "a", "client.stderr"), "utf8"), /could not start the client/);
    const m = await readJson(join(out, "manifest.json"));
    assert.equal(m.outcome.status, "stopped");
    assert.ok(m.ended_at);
  });

  test("a client that exits 0 leaving a process on its stdout: ok, timed from its exit, the leftover stopped", async () => {
    const out = join(dir, "o2");
    const pidFile = join(dir, "leftover.pid");
    // The next point's client fails (exit 3) if the leftover still runs when it starts (a zombie,
    // state Z, is stopped): stopped by the runner, not only later when ik exits.
    const check = `pid=$(cat ${pidFile}); if [ -r /proc/$pid/stat ] && ! grep -q '^[0-9]* (.*) Z ' /proc/$pid/stat; then exit 3; fi; exit 0`;
    const p = await plan([point(["sh", "-c", `sleep 30 & echo $! > ${pidFile}; echo done; exit 0`], { client_timeout_s: 15 }), point(["sh", "-c", check], { id: "b" })]);
    const t0 = performance.now();
    const r = await runIk(args(p, out), { env: env(), timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(performance.now() - t0 < 12_000, "not held to the client timeout");
    const res = await readJson(join(out, "a", "result.json"));
    assert.equal(res.status, "ok");
    assert.equal(res.client.timed_out, false);
    assert.ok(res.client.seconds < 2, String(res.client.seconds));
    assert.match(res.client.left_behind, /still held its stdout/);
    assert.equal(await readFile(join(out, "a", "client.stdout"), "utf8"), "done\n");
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    // Stopped: gone, or a zombie left for whichever ancestor adopted it to reap (signal 0 still
    // reaches a zombie; CI's process tree reaps later than a shell does).
    const running = () => {
      try {
        return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    };
    let alive = running();
    for (let i = 0; i < 50 && alive; i++) {
      await new Promise((res) => setTimeout(res, 100));
      alive = running();
    }
    assert.equal(alive, false, `the leftover process was stopped: ${alive ? readFileSync(`/proc/${pid}/stat`, "utf8") : ""}`);
  });

  test("an interrupt during the final drain keeps the client's own verdict beside it", async () => {
    const out = join(dir, "o3");
    const p = await plan([point(["sh", "-c", `touch ${busyFlag()}; exit 2`], { drain_timeout_s: 30 })]);
    const run = startArgv([ikBin()], args(p, out), { env: env() });
    try {
      await run.waitFor(/client running/, 30_000);
      await new Promise((res) => setTimeout(res, 1500));
      const st = await run.stop("SIGINT");
      assert.equal(st.code, 130, run.stderr());
    } finally {
      await rm(busyFlag(), { force: true });
    }
    const res = await readJson(join(out, "a", "result.json"));
    assert.equal(res.status, "interrupted");
    assert.match(res.stop_reason, /during the final drain, after the client ended \(attainment_failed/);
    assert.equal(res.client_status, "attainment_failed");
    assert.equal(res.client.exit_code, 2);
  });

  test("the plan: an empty program, an unknown workload field and a load-trial client's missing workload are 65; description and notes reach the manifest", async () => {
    const bad = await runIk(args(await plan([point([""]), { ...point(["true"], { id: "b" }), workload: { file: "w", rate_rps: 1, requests: 1, typo_field: 3 } }]), join(dir, "o4")), { env: env() });
    assert.equal(bad.code, 65, bad.stderr);
    assert.match(bad.stderr, /client_argv\[0\] is empty/);
    assert.match(bad.stderr, /workload\.typo_field is not a workload field/);
    // An ik load-trial client's workload that is not there: refused with the plan, before the preflight.
    const ltArgv = ["{ik}", "load-trial", "run", "--base", "{base}", "--expected-model", "{model}", "--workload", join(dir, "missing.json"), "--rate", "1", "--requests", "1",
      "--ttft", "2", "--tpot", "0.03", "--attainment", "0.95", "--out", "{point_dir}/client"];
    const missing = await runIk(args(await plan([{ ...point(ltArgv), workload: { file: join(dir, "missing.json"), rate_rps: 1, requests: 1 } }]), join(dir, "o6")), { env: env() });
    assert.equal(missing.code, 65, missing.stderr);
    assert.match(missing.stderr, /point 'a': workload\.file \S*missing\.json not found/);
    assert.equal(existsSync(join(dir, "o6")), false);
    const out = join(dir, "o5");
    const ok = await runIk(args(await plan([point(["true"])], { description: "rates sweep", notes: "after reboot" }), out), { env: env() });
    assert.equal(ok.code, 0, ok.stderr);
    const m = await readJson(join(out, "manifest.json"));
    assert.equal(m.plan.description, "rates sweep");
    assert.equal(m.plan.notes, "after reboot");
  });
});
