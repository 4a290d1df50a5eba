/**
 * `ik bench vllm` end to end through the compiled binary against `ik mock --engine vllm` (loopback
 * only; each run sends at most 12 requests of 8 tokens; the whole file about 15 s): vLLM's summary
 * block, the result file's keys against vLLM's own key list, values consistent with ik's record,
 * `ik summarize vllm` reading the file, --request-rate inf with --max-concurrency 2 (the mock's
 * request log never has more than 2 overlapping), --goodput, --save-detailed, and the flags
 * refused, warned or unknown.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { Buffer } from "node:buffer";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, type IkRun, runArgv, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { makeDatasetFixtures, SHAREGPT_CASES } from "../../scripts/make_dataset_fixtures.ts";

/**
 * The keys `vllm bench serve --save-result` writes with the default --percentile-metrics
 * (ttft,tpot,itl) and --metric-percentiles (99), without --save-detailed, --max-concurrency,
 * --metadata or ramp-up, in vLLM's order: vllm-project/vllm vllm/benchmarks/serve.py, main_async
 * (result_json setup and traffic keys) merged with benchmark()'s `result` dict, the detailed
 * fields deleted by `if not args.save_detailed`, and process_one_metric's mean/median/std/p{P}.
 */
const VLLM_DEFAULT_KEYS = [
  "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate", "burstiness", "max_concurrency",
  "duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput", "output_throughput",
  "total_token_throughput", "latencies", "queue_times", "max_output_tokens_per_s", "max_concurrent_requests", "rtfx",
  "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms",
  "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p99_itl_ms",
];
/** The same file's per-request arrays kept by --save-detailed (serve.py's deleted field list). */
const VLLM_DETAILED = ["input_lens", "output_lens", "start_times", "ttfts", "itls", "generated_texts", "errors"];

/** One line as vLLM formats it: `"{:<40} {:<10}".format(label, value)`. */
const L = (label: string, value: string) => `${label.padEnd(40)} ${value.padEnd(10)}`;

/** numpy.percentile's default (linear) method, written here independently of lib/export. */
function linear(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const r = (p / 100) * (s.length - 1), lo = Math.floor(r), hi = Math.min(s.length - 1, lo + 1);
  return s[lo] + (s[hi] - s[lo]) * (r - lo);
}

let mock: MockProc;
let dir: string;

before(async () => {
  mock = await startMock(["--engine", "vllm", "--request-log", "--ttft-ms", "30", "--tpot-ms", "5"]);
  dir = mkdtempSync(join(tmpdir(), "ik-bench-vllm-"));
});
after(async () => {
  await mock?.stop();
});

function ik(args: string[]): Promise<IkRun> {
  return runArgv([ikBin()], args, { env: { IK_RUNS_DIR: join(dir, "runs") }, cwd: dir, timeoutMs: 60_000 });
}
const base = () => ["bench", "vllm", "--base-url", mock.base, "--model", "mock-model", "--random-input-len", "24", "--random-output-len", "8"];
const recordId = (r: IkRun) => /ik's record (serve_benchmark-\S+)/.exec(r.stderr)?.[1] ?? assert.fail(r.stderr);
const rows = (id: string) => readFileSync(join(dir, "runs", id, "requests.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
const one = (d: string) => JSON.parse(readFileSync(join(d, readdirSync(d).find((f) => f.endsWith(".json"))!), "utf8"));

describe("ik bench vllm", { skip: BINARY_ONLY_SUITE }, () => {
  test("summary block, vLLM's key set, values from ik's record, and ik summarize vllm reads the file", async () => {
    const res = join(dir, "r1");
    const r = await ik([...base(), "--num-prompts", "12", "--request-rate", "40", "--seed", "3", "--save-result", "--result-dir", res]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    // vLLM's traffic lines (printed before its run), then the block.
    assert.deepEqual(lines.slice(0, 4), ["Traffic request rate: 40.0", "Burstiness factor: 1.0 (Poisson process)", "Maximum request concurrency: None", "============ Serving Benchmark Result ============"]);
    assert.equal(lines.at(-2), "=".repeat(50));
    assert.ok(lines.includes(L("Successful requests:", "12")), r.stdout);
    assert.ok(lines.includes(L("Failed requests:", "0")));
    assert.ok(lines.includes(L("Request rate configured (RPS):", "40.00")));
    assert.ok(lines.includes(L("Total input tokens:", "288")), "12 prompts of exactly 24 tokens (the mock's /tokenize)");
    assert.ok(lines.includes(L("Total generated tokens:", "96")));
    for (const l of ["Benchmark duration (s):", "Request throughput (req/s):", "Output token throughput (tok/s):", "Peak output token throughput (tok/s):", "Peak concurrent requests:", "Total token throughput (tok/s):"]) {
      assert.ok(lines.some((x) => x.startsWith(l.padEnd(41)) && /^\d+\.\d\d *$/.test(x.slice(41)) && x.length >= 51), l);
    }
    assert.ok(lines.includes("---------------Time to First Token----------------"));
    assert.ok(lines.includes("-----Time per Output Token (excl. 1st token)------"));
    assert.ok(lines.includes("---------------Inter-token Latency----------------"));
    assert.ok(!/^Maximum request concurrency: {2,}|Request goodput/m.test(r.stdout), "no cap line in the block");
    const file = one(res);
    assert.deepEqual(Object.keys(file).filter((k) => !k.startsWith("ik_")), VLLM_DEFAULT_KEYS);
    for (const k of Object.keys(file).filter((k) => k.startsWith("ik_"))) assert.equal(typeof file[k], "string", `${k}: metadata keys are strings`);
    assert.equal(file.request_rate, 40);
    assert.equal(file.max_concurrency, null);
    assert.equal(file.label, null);
    assert.equal(file.request_goodput, null);
    assert.match(readdirSync(res)[0], /^openai-40\.0qps-mock-model-\d{8}-\d{6}\.json$/);
    // vLLM's get_request rescales the gaps so the N-th arrival is at N / rate: the schedule's rate is the target.
    const level = JSON.parse(readFileSync(join(dir, "runs", recordId(r), "evidence.json"), "utf8")).data.levels[0];
    assert.ok(Math.abs(level.scheduled_rate_rps - 40) < 1e-6, `scheduled ${level.scheduled_rate_rps}`);
    assert.equal(level.schedule_note, null);
    // vLLM's duration starts before get_request's first gap: at the schedule's origin, which puts the
    // 12th (last) arrival at exactly 12 / 40 s; it ends with the last request.
    const all = rows(recordId(r));
    const origin = level.t_origin_ns as number;
    assert.ok(Math.abs(Math.max(...all.map((x) => x.t_scheduled_ns)) - origin - 0.3e9) < 2e3, "the last arrival at 0.3 s after the origin");
    assert.ok(origin < Math.min(...all.map((x) => x.t_send_ns)) - 1e6, "the first arrival gap is inside the duration");
    assert.ok(Math.abs(file.duration - (Math.max(...all.map((x) => x.t_end_ns)) - origin) / 1e9) < 1e-9, `duration ${file.duration}`);
    assert.ok(Math.abs(file.request_throughput - 12 / file.duration) < 1e-9);
    assert.match(file.ik_duration, /^from the schedule's origin/);
    // Written as Python's json.dump: its separators, floats with their .0, ints as ints.
    const text = readFileSync(join(res, readdirSync(res)[0]), "utf8");
    for (const frag of ['"request_rate": 40.0, "burstiness": 1.0, "max_concurrency": null, "duration": ', '"completed": 12, "failed": 0, "total_input_tokens": 288, "total_output_tokens": 96, ', '"rtfx": 0.0']) assert.ok(text.includes(frag), frag);
    assert.ok(/^[\x20-\x7e]*$/.test(text), "ensure_ascii");
    const got = all.filter((x) => x.ok);
    assert.equal(file.completed, got.length);
    assert.equal(file.total_input_tokens, got.reduce((a, x) => a + x.prompt_tokens, 0));
    assert.equal(file.total_output_tokens, got.reduce((a, x) => a + x.n_tokens, 0));
    const ttft = got.map((x) => x.ttft_ms);
    assert.ok(Math.abs(file.mean_ttft_ms - ttft.reduce((a, b) => a + b, 0) / ttft.length) < 1e-6);
    assert.ok(Math.abs(file.median_ttft_ms - linear(ttft, 50)) < 1e-6);
    assert.ok(Math.abs(file.p99_ttft_ms - linear(ttft, 99)) < 1e-6);
    assert.ok(lines.includes(L("P99 TTFT (ms):", file.p99_ttft_ms.toFixed(2))));
    // ik summarize vllm finds it through a runs.tsv row (tag = the file's name without .json).
    const tag = readdirSync(res)[0].replace(/\.json$/, "");
    writeFileSync(join(res, "runs.tsv"), `tag\tdataset\tconc\tserial_lo\tserial_hi\twarmups\tcatfile\trc\tcontainer\n${tag}\tvllm-random\t1\t0\t0\t0\t-\t0\t-\n`);
    const s = await ik(["summarize", "vllm", "--runs", join(res, "runs.tsv"), "--results", res, "--json"]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, new RegExp(tag));
    assert.match(s.stdout, /"requests":\s*12|12/);
  });

  test("--request-rate inf with --max-concurrency 2: never more than 2 in flight at the mock; client queue blocks; the record says send lag holds the wait", async () => {
    const res = join(dir, "r2");
    const logBefore = mock.proc.stdout().length;
    const r = await ik([...base(), "--num-prompts", "8", "--max-concurrency", "2", "--percentile-metrics", "ttft,e2el,client_queue_time,e2el_including_client_queue", "--metric-percentiles", "50,99.9", "--save-result", "--save-detailed", "--result-dir", res, "--label", "capped", "--metadata", "tp=1", "run=a"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.split("\n").includes(L("Maximum request concurrency:", "2")), r.stdout);
    assert.ok(r.stdout.startsWith("Traffic request rate: inf\nBurstiness factor: 1.0 (Poisson process)\nMaximum request concurrency: 2\n"), r.stdout);
    assert.ok(!/Request rate configured/.test(r.stdout), "inf prints no configured rate, as vLLM");
    assert.match(r.stdout, /^P99\.9 E2EL \(ms\):/m);
    assert.ok(r.stdout.includes("---------------Client-side Queueing---------------"));
    const file = one(res);
    assert.match(readdirSync(res)[0], /^capped-infqps-concurrency2-mock-model-/);
    assert.equal(file.request_rate, "inf");
    assert.equal(file.max_concurrency, 2);
    assert.equal(file.tp, "1");
    assert.equal(file.run, "a");
    assert.ok(file.max_concurrent_requests <= 2, `peak ${file.max_concurrent_requests}`);
    for (const k of VLLM_DETAILED) assert.equal(file[k].length, 8, k);
    // vLLM's order for these options: setup, metadata, traffic, benchmark()'s result dict (detailed
    // arrays kept), then process_one_metric per selected metric (e2el_including_client_queue only at a finite rate).
    const block = (m: string) => [`mean_${m}_ms`, `median_${m}_ms`, `std_${m}_ms`, `p50_${m}_ms`, `p99.9_${m}_ms`];
    assert.deepEqual(Object.keys(file).filter((k) => !k.startsWith("ik_")), [
      "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "tp", "run", "request_rate", "burstiness", "max_concurrency",
      "duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput", "output_throughput",
      "total_token_throughput", "input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times", "generated_texts", "errors",
      "max_output_tokens_per_s", "max_concurrent_requests", "rtfx", ...block("ttft"), ...block("e2el"), ...block("client_queue_time"),
    ]);
    assert.ok(!("mean_e2el_including_client_queue_ms" in file), "vLLM has that block only at a finite rate");
    assert.ok(!("mean_tpot_ms" in file));
    // The mock's own view: intervals [read, last token] of the 8 requests overlap at most 2 deep.
    const log = mock.proc.stdout().slice(logBefore).split("\n").map((l) => /recv_wall_ms=(\S+)/.exec(l) && /last_ms=(\S+)/.exec(l) ? [Number(/recv_wall_ms=(\S+)/.exec(l)![1]), Number(/last_ms=(\S+)/.exec(l)![1])] : null).filter((x) => x !== null) as number[][];
    assert.equal(log.length, 8);
    const edges = log.flatMap(([w, last]) => [[w, 1], [w + last, -1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let cur = 0, peak = 0;
    for (const [, dlt] of edges) peak = Math.max(peak, (cur += dlt));
    assert.equal(peak, 2);
    const rec = JSON.parse(readFileSync(join(dir, "runs", recordId(r), "evidence.json"), "utf8"));
    assert.ok(rec.limitations.some((l: string) => /capped at 2 requests in flight.*send lag includes that wait/.test(l)), rec.limitations.join("\n"));
    // Arrivals all due at 0, 2 at a time: the last pair waited about three pairs of requests.
    assert.ok(Math.max(...file.queue_times) > 0.05, `queue_times ${file.queue_times}`);
  });

  test("--goodput ttft:MS counts requests meeting it (vLLM's rule); an impossible SLO gives 0", async () => {
    const a = await ik([...base(), "--num-prompts", "4", "--request-rate", "50", "--goodput", "ttft:5000", "tpot:1000", "--save-result", "--result-dir", join(dir, "g1")]);
    assert.equal(a.code, 0, a.stderr);
    const fa = one(join(dir, "g1"));
    assert.ok(Math.abs(fa.request_goodput - fa.request_throughput) < 1e-9);
    assert.ok(a.stdout.split("\n").includes(L("Request goodput (req/s):", fa.request_goodput.toFixed(2))), a.stdout);
    const b = await ik([...base(), "--num-prompts", "4", "--request-rate", "50", "--goodput", "ttft:1", "--save-result", "--result-dir", join(dir, "g2")]);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(one(join(dir, "g2")).request_goodput, 0);
  });

  test("without --model: the first model's id in the requests, its root as model_id, tokenizer_id and in the file name (vLLM's get_first_model_from_server)", async () => {
    // A loopback proxy to the mock whose /v1/models says the served name stands for another root.
    const target = new URL(mock.base);
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        if (req.url === "/v1/models") {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ object: "list", data: [{ id: "mock-model", object: "model", owned_by: "vllm", root: "org/Real-Model-7B", max_model_len: 8192 }] }));
          return;
        }
        const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((ok) => proxy.listen(0, "127.0.0.1", ok));
    try {
      const res = join(dir, "root");
      const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const r = await ik(["bench", "vllm", "--base-url", base, "--num-prompts", "2", "--random-input-len", "8", "--random-output-len", "2", "--save-result", "--result-dir", res]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /--model not given: the server's first model is mock-model \(root org\/Real-Model-7B\)/);
      const file = one(res);
      assert.equal(file.model_id, "org/Real-Model-7B");
      assert.equal(file.tokenizer_id, "org/Real-Model-7B");
      assert.match(readdirSync(res)[0], /^openai-infqps-Real-Model-7B-\d{8}-\d{6}\.json$/);
      const sent = readFileSync(join(dir, "runs", recordId(r), "inputs", "openai", "load-rinf.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(sent.every((x) => x.body.model === "mock-model"), JSON.stringify(sent[0].body));
    } finally {
      proxy.close();
    }
  });

  test("a server without a /tokenize ik knows: lengths counted as words, said on stderr and in the record", async () => {
    const plain = await startMock(["--engine", "openai", "--ttft-ms", "5", "--tpot-ms", "1"]);
    try {
      const r = await runArgv([ikBin()], ["bench", "vllm", "--base-url", plain.base, "--model", "mock-model", "--num-prompts", "3", "--random-input-len", "24", "--random-output-len", "4"], { env: { IK_RUNS_DIR: join(dir, "runs") }, cwd: dir, timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /warning: the server cannot count tokens for ik .*counted as words \(approximate\)/);
      const rec = JSON.parse(readFileSync(join(dir, "runs", recordId(r), "evidence.json"), "utf8"));
      assert.ok(rec.limitations.some((l: string) => /random prompt lengths are approximate/.test(l)), rec.limitations.join("\n"));
    } finally {
      await plain.stop();
    }
  });

  test("failed requests: vLLM's 'Error i:' lines (at most 10) before the block, the errors in the file", async () => {
    const faulty = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1", "--fault", "http500@2"]);
    try {
      const res = join(dir, "f1");
      const r = await runArgv([ikBin()], ["bench", "vllm", "--base-url", faulty.base, "--model", "mock-model", "--num-prompts", "24", "--request-rate", "200", "--random-input-len", "8", "--random-output-len", "2", "--save-result", "--save-detailed", "--result-dir", res], { env: { IK_RUNS_DIR: join(dir, "runs") }, cwd: dir, timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      const file = one(res);
      assert.ok(file.failed >= 11 && file.completed >= 1, `failed ${file.failed}, completed ${file.completed}`);
      const lines = r.stdout.split("\n");
      const head = lines.indexOf("Failed requests during benchmark run detected (capping to 10):");
      assert.ok(head >= 0 && head < lines.indexOf("============ Serving Benchmark Result ============"), r.stdout);
      const errs = file.errors.filter((e: string) => e !== "");
      assert.equal(errs.length, file.failed);
      assert.deepEqual(lines.slice(head + 1, head + 11), errs.slice(0, 10).map((e: string, i: number) => `Error ${i}: ${e}`));
      assert.ok(!lines[head + 11].startsWith("Error 10"), "capped at 10");
      assert.ok(errs.every((e: string) => /500/.test(e)), errs[0]);
      // Failed requests keep a prompt length (vLLM's prompt_len), and the file says it is not the server's count.
      assert.ok(file.input_lens.every((n: number) => n > 0), JSON.stringify(file.input_lens));
      assert.match(file.ik_input_lens, /declared input_tokens/);
      assert.doesNotMatch(r.stderr, /All requests failed/, "some succeeded");
      const dead = await startMock(["--engine", "vllm", "--fault", "http500"]);
      try {
        const all = await runArgv([ikBin()], ["bench", "vllm", "--base-url", dead.base, "--model", "mock-model", "--num-prompts", "3", "--request-rate", "200", "--random-input-len", "8", "--random-output-len", "2"], { env: { IK_RUNS_DIR: join(dir, "runs") }, cwd: dir, timeoutMs: 60_000 });
        assert.match(all.stdout, /^Successful requests: +0 *$/m, all.stdout + all.stderr);
        assert.match(all.stderr, /warning: All requests failed\. This is likely due to a misconfiguration on the benchmark arguments\./);
      } finally {
        await dead.stop();
      }
    } finally {
      await faulty.stop();
    }
  });

  test("a hostile server's error text is printed on one line with its escape bytes made visible", async () => {
    const evil = createServer((req, res) => {
      if (req.url === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model", owned_by: "vllm" }] }));
        return;
      }
      req.resume();
      req.on("end", () => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "\u001b[2Jboom\nsecond line", type: "x", code: 500 } }));
      });
    });
    await new Promise<void>((ok) => evil.listen(0, "127.0.0.1", ok));
    try {
      const r = await ik(["bench", "vllm", "--base-url", `http://127.0.0.1:${(evil.address() as AddressInfo).port}`, "--model", "m", "--num-prompts", "2", "--random-input-len", "8", "--random-output-len", "2", "--lengths", "words"]);
      assert.ok(!r.stdout.includes("\u001b"), "no raw escape byte on stdout");
      const errLines = r.stdout.split("\n").filter((l) => l.startsWith("Error "));
      assert.equal(errLines.length, 2, r.stdout);
      for (const l of errLines) assert.match(l, /\\e\[2Jboom second line/);
    } finally {
      evil.close();
    }
  });

  test("--append-result adds a newline and the next result to the same file, as vLLM; --result-filename names it", async () => {
    const res = join(dir, "ap");
    for (const seed of ["1", "2"]) {
      const r = await ik([...base(), "--num-prompts", "2", "--seed", seed, "--append-result", "--result-dir", res, "--result-filename", "both.json"]);
      assert.equal(r.code, 0, r.stderr);
    }
    const text = readFileSync(join(res, "both.json"), "utf8");
    const parts = text.split("\n");
    assert.equal(parts.length, 2, text.slice(0, 200));
    for (const p of parts) assert.equal(JSON.parse(p).completed, 2);
  });

  test("a --result-filename that is a folder, or a --result-dir that is a file, is refused before any request (64)", async () => {
    const before = mock.proc.stdout().length;
    const r = await ik([...base(), "--num-prompts", "2", "--save-result", "--result-dir", dir, "--result-filename", ".."]);
    assert.equal(r.code, 64, r.stderr);
    assert.match(r.stderr, /^ik: --result-filename: .* is a folder, not a file; give a file name/m);
    // A file given as the folder: the same kind of mistake (64, as export's --out), not a failed write (74).
    writeFileSync(join(dir, "not-a-dir"), "x");
    const f = await ik([...base(), "--num-prompts", "2", "--save-result", "--result-dir", join(dir, "not-a-dir")]);
    assert.equal(f.code, 64, f.stderr);
    assert.match(f.stderr, /^ik: --result-dir: .*not-a-dir is a file; give a folder/m);
    assert.equal(mock.proc.stdout().slice(before).includes("ik-request"), false, "nothing sent");
  });

  test("a --result-dir that cannot be written is exit 74 before any request", async () => {
    writeFileSync(join(dir, "a-file"), "x");
    const before = mock.proc.stdout().split("\n").filter((l) => l.startsWith("ik-request")).length;
    const r = await ik([...base(), "--num-prompts", "2", "--save-result", "--result-dir", join(dir, "a-file", "sub")]);
    assert.equal(r.code, 74, r.stderr);
    assert.match(r.stderr, /a-file/);
    assert.equal(mock.proc.stdout().split("\n").filter((l) => l.startsWith("ik-request")).length, before, "nothing was sent");
  });

  test("--dataset-name sharegpt, sonnet and custom read local files (lib/datasets): the requests carry the file's prompts, the record names the dataset", async () => {
    const fx = makeDatasetFixtures(join(dir, "datasets"));
    for (const [name, file, extra] of [
      ["sharegpt", fx["sharegpt.json"], ["--sharegpt-output-len", "6"]],
      ["sonnet", fx["sonnet.txt"], ["--sonnet-input-len", "120", "--sonnet-prefix-len", "40", "--sonnet-output-len", "6"]],
      ["custom", fx["custom.jsonl"], ["--custom-output-len", "6"]],
    ] as const) {
      const out = join(dir, `ds-${name}`);
      const r = await ik(["bench", "vllm", "--base-url", mock.base, "--model", "mock-model", "--dataset-name", name, "--dataset-path", file, "--num-prompts", "3",
        "--save-result", "--save-detailed", "--result-dir", out, ...extra]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Successful requests: +3/);
      const res = one(out);
      assert.equal(res.completed, 3, name);
      assert.deepEqual(res.output_lens, [6, 6, 6], name);
      const rec = JSON.parse(readFileSync(join(dir, "runs", recordId(r), "evidence.json"), "utf8"));
      assert.match(String(rec.request.args.prompts ?? rec.identity.workload.prompt_set?.name ?? JSON.stringify(rec.identity.workload)), new RegExp(`dataset:${name === "custom" ? "jsonl" : name}`), name);
    }
    // A malformed file: 65, one line naming file:line.
    // vLLM's ShareGPT pair is conversations[0] and [1] whatever their roles: the fixture's 8 such pairs
    // (a gpt-first and a human-human one among them) all pass, and gpt-first is sent by its first turn.
    const all8 = await ik(["bench", "vllm", "--base-url", mock.base, "--model", "mock-model", "--dataset-name", "sharegpt", "--dataset-path", fx["sharegpt.json"], "--num-prompts", "8"]);
    assert.equal(all8.code, 0, all8.stderr);
    const sent8 = readFileSync(join(dir, "runs", recordId(all8), "inputs", "openai", "load-rinf.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(sent8.every((x) => x.salt === null), "8 distinct pairs: none reused");
    const first = SHAREGPT_CASES.find((c) => c.id === "gpt-first")!.conversations![0].value;
    assert.ok(sent8.some((x) => x.body.prompt === first), "gpt-first sent by its first (gpt) turn");
    const bad = await ik(["bench", "vllm", "--base-url", mock.base, "--model", "mock-model", "--dataset-name", "sharegpt", "--dataset-path", fx["sharegpt_bad.json"], "--num-prompts", "2"]);
    assert.equal(bad.code, 65, bad.stderr);
    assert.match(bad.stderr, /sharegpt_bad\.json:3/);
  });

  test("--output-len reaches every dataset, as vLLM maps it; custom's own default is 256 tokens, and -1 reads each line's output_tokens", async () => {
    const fx = makeDatasetFixtures(join(dir, "datasets-len"));
    const lens = async (name: string, file: string, extra: string[]) => {
      const out = join(dir, `len-${name}-${extra.join("")}`);
      const r = await ik(["bench", "vllm", "--base-url", mock.base, "--model", "mock-model", "--dataset-name", name, "--dataset-path", file, "--num-prompts", "3",
        "--save-result", "--save-detailed", "--result-dir", out, ...extra]);
      assert.equal(r.code, 0, r.stderr);
      return one(out).output_lens as number[];
    };
    assert.deepEqual(await lens("sharegpt", fx["sharegpt.json"], ["--output-len", "5"]), [5, 5, 5]);
    assert.deepEqual(await lens("custom", fx["custom.jsonl"], ["--output-len", "5"]), [5, 5, 5]);
    assert.deepEqual(await lens("sonnet", fx["sonnet.txt"], ["--sonnet-input-len", "120", "--sonnet-prefix-len", "40", "--output-len", "5"]), [5, 5, 5]);
    assert.deepEqual(await lens("custom", fx["custom.jsonl"], []), [256, 256, 256], "vLLM's --custom-output-len default");
    const own = await lens("custom", fx["custom.jsonl"], ["--custom-output-len", "-1"]);
    assert.ok(own.some((n) => n === 12 || n === 7) && !own.every((n) => n === 256), `each line's own output_tokens: ${own}`);
    const zero = await ik(["bench", "vllm", "--base-url", mock.base, "--model", "mock-model", "--dataset-name", "custom", "--dataset-path", fx["custom.jsonl"], "--custom-output-len", "0"]);
    assert.equal(zero.code, 64);
    assert.match(zero.stderr, /--custom-output-len/);
  });

  test("refused, warned and unknown flags: one line each, 64 naming the flag", async () => {
    const unknown = await ik([...base(), "--num-prompts", "2", "--frobnicate", "1"]);
    assert.equal(unknown.code, 64);
    assert.match(unknown.stderr, /`--frobnicate`/);
    assert.match(unknown.stderr, /see 'ik bench vllm --help'/);
    const near = await ik([...base(), "--num-prompt", "2"]);
    assert.equal(near.code, 64);
    assert.match(near.stderr, /--num-prompts/);
    const profile = await ik([...base(), "--num-prompts", "2", "--profile"]);
    assert.equal(profile.code, 64);
    assert.match(profile.stderr, /^ik: --profile: ik cannot honour it: /m);
    const ramp = await ik([...base(), "--ramp-up-strategy", "linear"]);
    assert.equal(ramp.code, 64);
    assert.match(ramp.stderr, /--ramp-up-strategy: ik cannot honour it/);
    const share = await ik([...base(), "--dataset-name", "sharegpt"]);
    assert.equal(share.code, 64);
    assert.match(share.stderr, /^ik: --dataset-path: is needed with --dataset-name sharegpt; give the sharegpt file; see 'ik bench vllm --help'$/m);
    const hf = await ik([...base(), "--dataset-name", "hf"]);
    assert.equal(hf.code, 64);
    assert.match(hf.stderr, /--dataset-name hf: ik cannot honour this vLLM dataset/);
    const backend = await ik([...base(), "--backend", "tgi"]);
    assert.equal(backend.code, 64);
    assert.match(backend.stderr, /--backend/);
    const rate = await ik([...base(), "--request-rate", "0"]);
    assert.equal(rate.code, 64);
    assert.match(rate.stderr, /^ik: --request-rate: '0' is not a positive number or inf; .*see 'ik bench vllm --help'$/m);
    const ep = await ik([...base(), "--backend", "openai-chat", "--endpoint", "/v1/completions"]);
    assert.equal(ep.code, 64);
    assert.match(ep.stderr, /--endpoint: '\/v1\/completions' is not the chat endpoint/);
    const warn = await ik([...base(), "--num-prompts", "2", "--trust-remote-code", "--disable-tqdm"]);
    assert.equal(warn.code, 0, warn.stderr);
    assert.match(warn.stderr, /warning: --trust-remote-code is accepted and changes nothing here/);
    assert.match(warn.stderr, /warning: --disable-tqdm is accepted/);
    // vLLM's options of datasets ik refuses by name are accepted (a warning); a request-shaping one is refused.
    const other = await ik([...base(), "--num-prompts", "1", "--txt-slices-input-len", "5", "--no-reranker", "--hf-name", "x/y"]);
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stderr, /warning: --txt-slices-input-len is accepted and changes nothing here: it applies only to --dataset-name txt-slices/);
    assert.match(other.stderr, /warning: --no-reranker is accepted/);
    const kw = await ik([...base(), "--chat-template-kwargs", '{"enable_thinking": false}']);
    assert.equal(kw.code, 64);
    assert.match(kw.stderr, /^ik: --chat-template-kwargs: ik cannot honour it: .*--extra-body/m);
    const chat = await ik([...base(), "--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--num-prompts", "2", "--temperature", "0"]);
    assert.equal(chat.code, 0, chat.stderr);
    // vLLM's RandomDataset: --random-input-len less the tokenizer's special tokens (none on the mock) of
    // message text; the server's chat template comes on top of it in the count it reports.
    const inputs = readFileSync(join(dir, "runs", recordId(chat), "inputs", "openai-chat", "load-rinf.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    for (const x of inputs) assert.equal(x.body.messages[0].content.split(" ").length, 24, x.body.messages[0].content);
    const counted = rows(recordId(chat)).map((x) => x.prompt_tokens as number);
    assert.ok(counted.every((n) => n > 24 && n === counted[0]), `server counts ${counted}`);
    assert.ok(chat.stdout.split("\n").includes(L("Total input tokens:", String(counted[0] * 2))), chat.stdout);
    assert.match(chat.stderr, /as vLLM: the message text, less the special tokens the tokenizer adds; the server's chat template comes on top/);
    assert.equal(inputs[0].body.temperature, 0);
    assert.ok(Array.isArray(inputs[0].body.messages));
    assert.doesNotMatch(chat.stderr, /no temperature is sent/);
    // Without --temperature no temperature is sent, as vllm bench serve (the server's default applies), and it says so.
    const none = await ik([...base(), "--num-prompts", "2"]);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stderr, /warning: no temperature is sent \(the server's default applies, as vllm bench serve does\); --temperature 0 for greedy/);
    const sent = readFileSync(join(dir, "runs", recordId(none), "inputs", "openai", "load-rinf.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(sent.length === 2 && sent.every((x) => !("temperature" in x.body)), JSON.stringify(sent[0].body));
    const warm = await ik([...base(), "--num-prompts", "2", "--temperature", "0.7"]);
    assert.equal(warm.code, 0, warm.stderr);
    const sent7 = readFileSync(join(dir, "runs", recordId(warm), "inputs", "openai", "load-rinf.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(sent7.every((x) => x.body.temperature === 0.7));
    const serve = await ik(["bench", "serve", "--base-url", mock.base, "--model", "m", "--request-rate", "4"]);
    assert.equal(serve.code, 64);
    assert.match(serve.stderr, /use --rates R,S with --mode load .*; or run 'ik bench vllm', which takes vllm bench serve's --request-rate as it is; see 'ik bench serve --help'$/m);
    const aiperf = await ik([...base(), "--request-count", "4"]);
    assert.equal(aiperf.code, 64);
    assert.match(aiperf.stderr, /in 'ik bench vllm' use --num-prompts N; see 'ik bench vllm --help'$/m);
  });
});
