/**
 * ik's live metrics through dist/ik against `ik mock` (issue 22 §1-§2):
 * - `--metrics-listen` serves /metrics while a load run goes; a scrape after the run (within
 *   `--metrics-linger-s`) agrees with the journaled rows exactly, level by level (sent, ok, failed
 *   by kind, output tokens, TTFT and e2e histogram counts and sums), nothing in flight, and the
 *   endpoint appears only as its HMAC tag;
 * - `--prometheus-remote-write` into a REAL Prometheus (Debian's 2.42): after the run,
 *   /api/v1/query returns the pushed series with the rows' values; an auth header's value never
 *   reaches a file or the terminal; Prometheus killed mid-run: the run completes and the record
 *   counts what was not delivered;
 * - Prometheus scraping `--metrics-listen` itself (a scrape config of the test's) sees the series.
 * Bun only (end to end): ~25 s.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer, type AddressInfo } from "node:net";
import { createServer as createHttpServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parsePrometheusText, type PromSample } from "../../lib/scrape/prometheus_text.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { freePort } from "../_helpers/ports.ts";
import { ikBin, type IkRun, ROOT, runIk, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { prometheusSkip, startPrometheus } from "./_prometheus.ts";

const BUN = runtime.name === "bun";

/** Runs ik, scraping `url` every 100 ms meanwhile; the last scrape that answered. */
async function runScraping(args: string[], env: Record<string, string>, url: string): Promise<{ r: IkRun; last: string | null; scrapes: number }> {
  let last: string | null = null, scrapes = 0, done = false;
  const poll = (async () => {
    while (!done) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
        if (res.ok) {
          last = await res.text();
          scrapes++;
        } else await res.body?.cancel();
      } catch { /* not up yet, or gone */ }
      await new Promise((ok) => setTimeout(ok, 100));
    }
  })();
  const r = await runIk(args, { env, timeoutMs: 90_000 });
  done = true;
  await poll;
  return { r, last, scrapes };
}

const value = (samples: PromSample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

describe("live metrics (binary)", { skip: BUN ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let mock: MockProc;
  let dir = "";
  let env: Record<string, string> = {};
  before(async () => {
    mock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1", "--fault", "http500@7"]);
    dir = await mkdtemp(join(tmpdir(), "ik-live-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const load = (extra: string[]) => ["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--rates", "20,40", "--requests", "24",
    "--max-tokens", "8", "--warmup", "0", "--json", ...extra];
  const rowsOf = async (cap: { data: { measurement: string } }) => {
    const rdir = join(env.IK_RUNS_DIR, cap.data.measurement);
    const rec = JSON.parse(await readFile(join(rdir, "evidence.json"), "utf8"));
    const rows = (await readFile(join(rdir, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    return { rec, rows };
  };

  test("--metrics-listen: the last scrape equals the rows, level by level; the endpoint only as its tag", async () => {
    const port = await freePort();
    const { r, last, scrapes } = await runScraping(load(["--metrics-listen", `127.0.0.1:${port}`, "--metrics-linger-s", "2"]), env, `http://127.0.0.1:${port}/metrics`);
    assert.equal(r.code, 0, r.stderr.slice(-1500));
    assert.match(r.stderr, new RegExp(`bench serve: live metrics at http://127\\.0\\.0\\.1:${port}/metrics`));
    assert.ok(last && scrapes >= 3, `scrapes ${scrapes}`);
    const { rec, rows } = await rowsOf(JSON.parse(r.stdout));
    assert.equal(rec.data.live_metrics.listen, `http://127.0.0.1:${port}/metrics`);
    const prom = parsePrometheusText(last as string);
    assert.equal(prom.badLines, 0);
    for (const level of ["r20", "r40"]) {
      const mine = rows.filter((x) => x.level === level);
      const ok = mine.filter((x) => x.ok);
      assert.ok(mine.length === 24, `${level}: ${mine.length} rows`);
      assert.equal(value(prom.samples, "ik_requests_sent_total", { level }), mine.length, level);
      assert.equal(value(prom.samples, "ik_requests_scheduled_total", { level }), 24, level);
      assert.equal(value(prom.samples, "ik_requests_ok_total", { level }), ok.length, level);
      assert.equal(value(prom.samples, "ik_requests_failed_total", { level, kind: "http" }), mine.filter((x) => !x.ok && x.error_kind === "http").length, level);
      assert.equal(value(prom.samples, "ik_requests_in_flight", { level }), 0, level);
      assert.equal(value(prom.samples, "ik_output_tokens_total", { level }), ok.reduce((a, x) => a + x.n_tokens, 0), level);
      assert.equal(value(prom.samples, "ik_ttft_seconds_count", { level }), ok.filter((x) => x.ttft_ms !== null).length, level);
      const sum = ok.reduce((a, x) => a + x.ttft_ms / 1000, 0);
      assert.ok(Math.abs(value(prom.samples, "ik_ttft_seconds_sum", { level }) - sum) < 1e-6, `${level} ttft sum`);
      assert.equal(value(prom.samples, "ik_e2e_seconds_count", { level }), ok.length, level);
      assert.equal(value(prom.samples, "ik_ttft_seconds_bucket", { level, le: "+Inf" }), ok.length, level);
    }
    assert.ok(rows.some((x) => !x.ok), "the fault made failures to count");
    const info = prom.samples.find((s) => s.name === "ik_run_info");
    assert.equal(info?.labels.endpoint, rec.request.args.base_url, "the endpoint's HMAC tag");
    assert.doesNotMatch(last as string, new RegExp(mock.base.replace(/[.]/g, "\\.")), "never the URL");
  });

  test("--gpu-metrics-url: each GPU's power reading is the live ik_gpu_power_watts gauge (it never had a sample)", async () => {
    // Plus a second host's GPU 0 (another UUID): its own series, not an overwrite of the first's.
    const prom = readFileSync(join(ROOT, "tests", "testdata", "gpu", "dcgm_h100x2_t0.prom"), "utf8") +
      'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-0000aaaa-1111-2222-3333-444455556666",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-08"} 123.000000\n';
    const dcgm = createHttpServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(prom);
    });
    await new Promise<void>((ok) => dcgm.listen(0, "127.0.0.1", ok));
    try {
      const port = await freePort();
      const { r, last } = await runScraping(load(["--metrics-listen", `127.0.0.1:${port}`, "--metrics-linger-s", "1", "--gpu-metrics-url", `http://127.0.0.1:${(dcgm.address() as AddressInfo).port}/metrics`]), env, `http://127.0.0.1:${port}/metrics`);
      assert.equal(r.code, 0, r.stderr);
      const samples = parsePrometheusText(last as string).samples.filter((x) => x.name === "ik_gpu_power_watts");
      assert.ok(samples.length >= 1 && samples.every((x) => x.value > 0), JSON.stringify(samples));
      const gpu0 = samples.filter((x) => x.labels.gpu === "0").map((x) => [x.labels.uuid, x.value]).sort();
      assert.deepEqual(gpu0, [["GPU-0000aaaa-1111-2222-3333-444455556666", 123], ["GPU-22dbdd79-f55a-92a8-aa39-322198e72ed6", 312.5]]);
    } finally {
      dcgm.close();
    }
  });

  test("single mode never reads the server: no ik_server_* sample (they read a made-up 0)", async () => {
    const port = await freePort();
    const { r, last } = await runScraping(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rounds", "1", "--warmup", "0", "--max-tokens", "4", "--buckets", "very_short",
      "--json", "--metrics-listen", `127.0.0.1:${port}`, "--metrics-linger-s", "1"], env, `http://127.0.0.1:${port}/metrics`);
    assert.equal(r.code, 0, r.stderr);
    const names = new Set(parsePrometheusText(last as string).samples.map((x) => x.name));
    assert.ok(names.has("ik_requests_sent_total") || names.has("ik_requests_ok_total"), [...names].join(","));
    for (const n of ["ik_server_requests_running", "ik_server_requests_waiting", "ik_server_kv_cache_usage_ratio"]) assert.ok(!names.has(n), n);
  });

  test("a --metrics-listen port already taken is a usage error naming it (64), not a crash", async () => {
    const taken = createServer();
    await new Promise<void>((ok) => taken.listen(0, "127.0.0.1", ok));
    try {
      const port = (taken.address() as AddressInfo).port;
      const r = await runIk(load(["--metrics-listen", `127.0.0.1:${port}`]), { env, timeoutMs: 30_000 });
      assert.equal(r.code, 64, r.stderr);
      assert.match(r.stderr, new RegExp(`^ik: --metrics-listen: cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\); choose a free port`, "m"));
    } finally {
      taken.close();
    }
  });

  test("an interrupt during --metrics-linger-s ends the linger: the records are written at once (they were lost past the 10 s grace)", async () => {
    const store = join(dir, "linger-runs");
    const p = startArgv([ikBin()], load(["--metrics-listen", "127.0.0.1:0", "--metrics-linger-s", "60"]), { env: { ...env, IK_RUNS_DIR: store } });
    await p.waitFor(/live metrics at http/, 30_000);
    // Two levels of 24 requests at 20 and 40 req/s end within ~2 s; then the run lingers 60 s.
    await new Promise((ok) => setTimeout(ok, 6000));
    const t1 = Date.now();
    const e = await p.stop("SIGINT");
    assert.ok(Date.now() - t1 < 8000, `ended ${Date.now() - t1} ms after the interrupt`);
    assert.ok(e.code === 0 || e.code === 130, `exit ${e.code}: ${p.stderr()}`);
    const caps = readdirSync(store).filter((d) => d.startsWith("capacity-"));
    assert.equal(caps.length, 1, readdirSync(store).join(", "));
    const cap = JSON.parse(readFileSync(join(store, caps[0], "evidence.json"), "utf8"));
    assert.ok(statSync(join(store, cap.data.measurement, "evidence.json")).isFile(), "the measured record is whole in the store");
  });

  test("remote write into a real Prometheus: the rows' values; an auth header never written; a Prometheus killed mid-run is counted", { skip: prometheusSkip() }, async () => {
    const prom = await startPrometheus();
    try {
      const secret = "sk-live-canary-7f3a9c1e2b";
      const r = await runIk(load(["--prometheus-remote-write", prom.writeUrl, "--prometheus-remote-write-header", `Authorization=Bearer ${secret}`, "--push-interval-s", "0.5"]), { env, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr.slice(-1500));
      const cap = JSON.parse(r.stdout);
      const { rec, rows } = await rowsOf(cap);
      const rw = rec.data.live_metrics.remote_write;
      assert.ok(rw.samplesDelivered > 0 && rw.samplesNotDelivered === 0, JSON.stringify(rw));
      const at = Date.now();
      for (const level of ["r20", "r40"]) {
        // The run's last push ends each series with a stale marker (remote write 1.0: MUST), so
        // an instant query after the run finds none; the samples are there for a range query.
        assert.deepEqual(await prom.query(`ik_requests_ok_total{level="${level}"}`, at), [], `${level}: not marked stale`);
        const got = await prom.query(`last_over_time(ik_requests_ok_total{level="${level}"}[5m])`, at);
        assert.equal(got.length, 1, `${level}: ${JSON.stringify(got)} ${prom.log()}`);
        assert.equal(got[0].value, rows.filter((x) => x.level === level && x.ok).length, level);
        assert.equal(got[0].metric.label, rec.data.label);
      }
      // The header's value is a secret: not in stdout, stderr, or any file the run wrote.
      assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret));
      const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
      for (const f of walk(env.IK_RUNS_DIR)) assert.ok(!readFileSync(f, "utf8").includes(secret), `${f} holds the header's value`);

      // Killed mid-run: the run still completes and says what was not delivered.
      const run = runIk(load(["--prometheus-remote-write", prom.writeUrl, "--push-interval-s", "0.3"]), { env, timeoutMs: 90_000 });
      await new Promise((ok) => setTimeout(ok, 700));
      await prom.kill();
      const k = await run;
      assert.equal(k.code, 0, k.stderr.slice(-1500));
      const krec = (await rowsOf(JSON.parse(k.stdout))).rec;
      assert.ok(krec.data.live_metrics.remote_write.samplesNotDelivered > 0, JSON.stringify(krec.data.live_metrics.remote_write));
      assert.ok(krec.limitations.some((l: string) => /sample\(s\) were not delivered .*the measurement itself is whole/.test(l)), krec.limitations.join(" | "));
    } finally {
      await prom.stop();
    }
  });

  test("Prometheus scraping --metrics-listen itself sees ik's series", { skip: prometheusSkip() }, async () => {
    const port = await freePort();
    const prom = await startPrometheus({ targets: [`127.0.0.1:${port}`], intervalS: 0.5 });
    try {
      // Prometheus spreads its first scrape over the interval and finds the target a moment after
      // its start: the linger leaves it several scrapes of the final counts.
      const r = await runIk(load(["--metrics-listen", `127.0.0.1:${port}`, "--metrics-linger-s", "5"]), { env, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr.slice(-1500));
      const { rows } = await rowsOf(JSON.parse(r.stdout));
      let got = await prom.query(`max_over_time(ik_requests_ok_total{level="r40"}[1m])`, Date.now());
      for (let i = 0; i < 20 && !got.length; i++) {
        await new Promise((ok) => setTimeout(ok, 250));
        got = await prom.query(`max_over_time(ik_requests_ok_total{level="r40"}[1m])`, Date.now());
      }
      const targets = await (await fetch(`${prom.base}/api/v1/targets`)).text();
      assert.equal(got.length, 1, `${JSON.stringify(got)} ${targets.slice(0, 800)} ${prom.log()}`);
      assert.equal(got[0].value, rows.filter((x) => x.level === "r40" && x.ok).length);
      assert.equal(got[0].metric.job, "ik");
    } finally {
      await prom.stop();
    }
  });
});
