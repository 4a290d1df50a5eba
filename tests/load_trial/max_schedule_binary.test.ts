/**
 * Through dist/ik: `load-trial run --rate 1e-6` was accepted and would have run for weeks. A
 * schedule whose seeded last arrival is past `--max-schedule-h` (default 24 h) is refused with 64
 * before any request is sent (the mock's request log stays empty), naming the hours and the flag.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

let dir = "";
let mock: MockProc;
let workload = "";
const env = () => ({ IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") });

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-lt-sched-"));
  mock = await startMock(["--engine", "vllm", "--ttft-ms", "1", "--tpot-ms", "1", "--request-log"]);
  const prep = await runIk(["load-trial", "prepare", "--out", join(dir, "lt"), "--synth", "16:4", "--requests", "8", "--json"], { env: env() });
  assert.equal(prep.code, 0, prep.stderr);
  workload = JSON.parse(prep.stdout).path;
});
after(async () => {
  await mock?.stop();
  await rm(dir, { recursive: true, force: true });
});

const run = (rate: string, n: string, extra: string[], out: string) =>
  runIk(["load-trial", "run", "--base", mock.base, "--expected-model", "mock-model", "--workload", workload, "--rate", rate, "--requests", n,
    "--ttft", "2", "--tpot", "0.05", "--attainment", "0.9", "--out", join(dir, out), ...extra], { env: env(), timeoutMs: 30_000 });

test("a schedule past --max-schedule-h is refused (64) before anything is sent, naming the hours and the flag", async () => {
  const r = await run("1e-6", "10", [], "weeks");
  assert.equal(r.code, 64, r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^ik: --rate: 10 requests at 0\.000001 req\/s would take [\d.]+ h \(the seeded schedule's last arrival\), over --max-schedule-h 24/);
  assert.match(lines[0], /raise --rate, lower --requests, or raise --max-schedule-h/);
  // The bound is the flag's: 0.001 h (3.6 s) refuses 20 requests at 2 req/s (about 10 s), 1 h accepts them.
  const tight = await run("2", "20", ["--max-schedule-h", "0.001"], "tight");
  assert.equal(tight.code, 64, tight.stderr);
  assert.match(tight.stderr, /over --max-schedule-h 0\.001/);
  assert.doesNotMatch(mock.proc.stdout(), /ik-request /, "nothing reached the server");
  // Inside the bound the schedule runs (its attainment verdict, 0 or 2, is another test's).
  const ok = await run("10", "6", ["--max-schedule-h", "1"], "fits");
  assert.ok(ok.code === 0 || ok.code === 2, `${ok.code}: ${ok.stderr}`);
  assert.equal(mock.proc.stdout().match(/ik-request /g)?.length, 6);
  // Its summary says how the sends were paced (the Bun build: its precise sleep; the Node build: timers).
  const built = JSON.parse((await runIk(["--version", "--json"])).stdout).runtime as string;
  const summary = JSON.parse(await readFile(join(dir, "fits", "summary.json"), "utf8"));
  assert.equal(summary.pacer.sleep, built.startsWith("bun ") ? "precise" : "timer", JSON.stringify(summary.pacer));
  // ik's request path ran in memory first (the server saw only the 6 above), and each row's wait
  // for a CPU gives the send lag less it.
  assert.ok(summary.client_warm_up.requests >= 10, JSON.stringify(summary.client_warm_up));
  const rows = (await readFile(join(dir, "fits", "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
  assert.ok(rows.every((r) => typeof r.send_cpu_wait_ms === "number" && r.send_cpu_wait_ms >= 0), JSON.stringify(rows[0]));
  assert.equal(summary.percentiles.send_lag_without_cpu_wait_ms.n, 6);
  assert.ok(summary.percentiles.send_lag_without_cpu_wait_ms.max <= summary.percentiles.send_lag_ms.max);
});

test("a folder holding the rows of a trial that ended without its summary is refused (64), the rows kept", async () => {
  const out = join(dir, "killed");
  await mkdir(out, { recursive: true });
  const stale = '{"seq":0,"ok":true,"stale":true}\n';
  await writeFile(join(out, "requests.jsonl"), stale);
  const before = mock.proc.stdout().match(/ik-request /g)?.length ?? 0;
  const r = await run("10", "3", [], "killed");
  assert.equal(r.code, 64, r.stderr);
  assert.match(r.stderr, /^ik: --out: .*requests\.jsonl already exists \(a trial that ended without its summary\.json\); give a new folder; the rows there are kept/m);
  assert.equal(await readFile(join(out, "requests.jsonl"), "utf8"), stale);
  assert.equal(mock.proc.stdout().match(/ik-request /g)?.length ?? 0, before, "nothing sent");
});

test("a rate of 0 is refused saying 'above 0', one below the tiny minimum saying the minimum (the library printed 'greater than or equal to 0')", async () => {
  for (const [rate, want] of [["0", "above 0"], ["1e-9", "of at least 0.000001"]]) {
    const r = await run(rate, "3", [], `zero-${rate}`);
    assert.equal(r.code, 64, r.stderr);
    assert.match(r.stderr, new RegExp(`--rate\`: Expected a number ${want.replace(/[.]/g, "\\$&")}, but got ${rate.replace(/[.-]/g, "\\$&")}`));
  }
});

test("an empty --out is refused (64), not the current folder", async () => {
  const prep = await runIk(["load-trial", "prepare", "--out", "", "--synth", "16:4", "--requests", "2"], { env: env() });
  assert.equal(prep.code, 64, prep.stderr);
  assert.match(prep.stderr, /^ik: load-trial prepare: `--out`: is empty: give a folder/m);
  const empty = await runIk(["load-trial", "run", "--base", mock.base, "--expected-model", "mock-model", "--workload", workload, "--rate", "10", "--requests", "3",
    "--ttft", "2", "--tpot", "0.05", "--attainment", "0.9", "--out", ""], { env: env(), timeoutMs: 30_000 });
  assert.equal(empty.code, 64, empty.stderr);
  assert.match(empty.stderr, /^ik: load-trial run: `--out`: is empty: give a folder/m);
});
