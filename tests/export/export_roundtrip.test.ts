/**
 * `ik export` end to end through the binary, against `ik mock` (2 tokens per event, every 7th
 * request an HTTP 500, every 5th cut off mid-stream after some tokens): a load record's levels as vLLM result files (arrays as vLLM writes them,
 * failed requests inside, percentiles recomputed by linear interpolation, max_concurrency only
 * for closed loop), read back by `ik summarize vllm` with table values equal to the record's;
 * CSV and JSONL of load and single records; `--format vllm` of a single record refused (64); an
 * altered record refused (65). ~15 s.
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { linearPercentile } from "../../lib/export/mod.ts";
import { fixed } from "../../lib/summarize/mod.ts";
import { close } from "../summarize/_unit.ts";

let mock: MockProc;
let dir: string;
let env: Record<string, string>;
let loadCapacity: Record<string, any>;

const bench = (extra: string[]) =>
  runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--warmup", "1", "--max-tokens", "16", "--json", ...extra], { env, timeoutMs: 60_000 });

/** Splits one CSV line (RFC 4180 quotes). */
function csvSplit(line: string): string[] {
  const out: string[] = [];
  let cur = "", q = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (q) {
      if (ch === '"' && line[i + 1] === '"') (cur += '"', i++);
      else if (ch === '"') q = false;
      else cur += ch;
    } else if (ch === '"') q = true;
    else if (ch === ",") (out.push(cur), (cur = ""));
    else cur += ch;
  }
  out.push(cur);
  return out;
}

const jsonl = (t: string) => t.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

before(async () => {
  mock = await startMock(["--ttft-ms", "5", "--tpot-ms", "1", "--tokens-per-event", "2", "--fault", "http500@7", "--fault", "truncate@5"]);
  dir = await mkdtemp(join(tmpdir(), "ik-export-"));
  env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  const r = await bench(["--mode", "load", "--rates", "20,40", "--duration-s", "1"]);
  assert.equal(r.code, 0, r.stderr);
  loadCapacity = JSON.parse(r.stdout);
});
after(async () => {
  await mock.stop();
  await rm(dir, { recursive: true, force: true });
});

async function measured(id: string): Promise<{ record: Record<string, any>; rows: Record<string, any>[] }> {
  const d = join(dir, "runs", id);
  return { record: JSON.parse(await readFile(join(d, "evidence.json"), "utf8")), rows: jsonl(await readFile(join(d, "requests.jsonl"), "utf8")) };
}

describe("ik export --format vllm", { skip: BINARY_ONLY_SUITE }, () => {
  test("one vLLM result file per level, read back by ik summarize vllm with the record's values", async () => {
    const out = join(dir, "vllm-out");
    const e = await runIk(["export", loadCapacity.evidence_id, "--format", "vllm", "--out", out, "--json"], { env, timeoutMs: 30_000 });
    assert.equal(e.code, 0, e.stderr);
    assert.match(e.stderr, /is a derived capacity record: exporting its measurement serve_benchmark-/);
    const { record, rows } = await measured(loadCapacity.data.measurement);
    const levels = record.data.levels as Record<string, any>[];
    assert.deepEqual(JSON.parse(e.stdout).files.map((f: string) => f.slice(out.length + 1)), [...levels.map((l) => `vllm-${l.name}.json`), "runs.tsv"]);
    // runs.tsv's warmups: the warm-up requests the run sent once, before its first level (its --warmup).
    const tsv = (await readFile(join(out, "runs.tsv"), "utf8")).trim().split("\n").slice(1).map((l) => l.split("\t"));
    assert.ok(tsv.length > 1 && tsv.every((c, i) => c[5] === String(i === 0 ? record.request.args.warmup : 0)), JSON.stringify([tsv, record.request.args.warmup]));
    let failedSeen = 0;
    for (const lv of levels) {
      const raw = await readFile(join(out, `vllm-${lv.name}.json`), "utf8");
      const f = JSON.parse(raw);
      // Python's json.dump: the rate a float with its .0, counts as ints.
      assert.ok(raw.includes(`"request_rate": ${lv.target_rate_rps}.0, "burstiness": 1.0, "max_concurrency": null`), raw.slice(0, 300));
      assert.ok(raw.includes(`"completed": ${lv.summary.n_ok}, "failed": ${lv.summary.n_failed}, `));
      assert.match(f.ik_duration, /^ik's window: from the first send/);
      const mine = rows.filter((r) => r.level === lv.name).sort((a, b) => a.t_send_ns - b.t_send_ns);
      const ok = mine.filter((r) => r.ok);
      const s = lv.summary;
      assert.equal(f.num_prompts, s.n_requests);
      assert.equal(f.completed, s.n_ok);
      assert.equal(f.failed, s.n_failed);
      assert.equal(f.request_rate, lv.target_rate_rps);
      assert.equal(f.max_concurrency, null);
      assert.equal(f.duration, s.window_s);
      assert.equal(f.total_output_tokens, s.output_tokens);
      close(f.output_throughput, s.output_tok_s, "output_throughput");
      close(f.request_throughput, s.achieved_rps, "request_throughput");
      assert.match(f.ik_percentiles, /linear interpolation/);
      for (const k of ["input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times", "generated_texts", "errors"]) {
        assert.equal(f[k].length, mine.length, k);
      }
      mine.forEach((r, i) => {
        if (r.ok) {
          assert.equal(f.errors[i], "");
          assert.equal(f.output_lens[i], r.n_tokens);
          assert.equal(f.ttfts[i], r.ttft_ms / 1000);
          assert.equal(f.latencies[i], r.e2e_ms / 1000);
          assert.equal(f.itls[i].length, r.n_token_events - 1);
          assert.equal(f.start_times[i], r.t_send_ns / 1e9);
        } else {
          failedSeen++;
          assert.ok(f.errors[i].length > 0);
          assert.deepEqual([f.output_lens[i], f.ttfts[i], f.latencies[i], f.itls[i]], [0, 0, 0, []]);
        }
      });
      for (const p of [50, 90, 95, 99]) {
        close(f[`p${p}_ttft_ms`], linearPercentile(ok.map((r) => r.ttft_ms / 1000), p)! * 1000, `p${p} ttft`);
        close(f[`p${p}_e2el_ms`], linearPercentile(ok.map((r) => r.e2e_ms / 1000), p)! * 1000, `p${p} e2el`);
        const tpots = ok.filter((r) => r.n_tokens > 1).map((r) => (r.e2e_ms - r.ttft_ms) / 1000 / (r.n_tokens - 1));
        close(f[`p${p}_tpot_ms`], linearPercentile(tpots, p)! * 1000, `p${p} tpot`);
      }
    }
    assert.ok(failedSeen > 0, "the mock's faults should have failed some requests");
    // a request cut off mid-stream has tokens in ik's row, but vLLM writes 0 for a failed request
    assert.ok(rows.some((r) => !r.ok && r.n_tokens > 0), "no failed row with tokens: the truncate fault did not bite");
    // read back
    const back = await runIk(["summarize", "vllm", "--runs", join(out, "runs.tsv"), "--results", out, "--json"], { env, timeoutMs: 30_000 });
    assert.equal(back.code, 0, back.stderr);
    const sum = JSON.parse(back.stdout);
    const text = (await runIk(["summarize", "vllm", "--runs", join(out, "runs.tsv"), "--results", out], { env, timeoutMs: 30_000 })).stdout;
    // runs.tsv's conc of a rate level is the rate: the table heads it so
    assert.ok(text.includes("== vllm-rate, pass - ==\n| Rate (req/s) | Requests |"), text);
    assert.ok(sum.runs.every((x: any) => x.conc_is_rate === true));
    for (const lv of levels) {
      const r = sum.runs.find((x: any) => x.tag === `vllm-${lv.name}`);
      const s = lv.summary;
      const ok = rows.filter((x) => x.level === lv.name && x.ok);
      assert.equal(r.completed, s.n_ok);
      assert.equal(r.failed, s.n_failed);
      assert.equal(r.conc, lv.level);
      close(r.out_tps, s.output_tok_s, "out_tps");
      close(r.req_s, s.achieved_rps, "req_s");
      close(r.duration, s.window_s, "duration");
      close(r.ttft_p50, linearPercentile(ok.map((x) => x.ttft_ms), 50), "ttft_p50");
      close(r.ttft_p99, linearPercentile(ok.map((x) => x.ttft_ms), 99), "ttft_p99");
      close(r.e2el_p50_s, linearPercentile(ok.map((x) => x.e2e_ms), 50)! / 1000, "e2el_p50_s");
      close(r.client_out, s.output_tokens, "client_out");
      // 2 tokens per event: the client-side tau is (n - 1) / (events - 1) summed
      close(r.tau_client, ok.reduce((a, x) => a + x.n_tokens - 1, 0) / ok.reduce((a, x) => a + x.n_token_events - 1, 0), "tau_client");
      assert.ok(r.tau_client > 1.8, String(r.tau_client));
      assert.ok(sum.flags.includes(`vllm-${lv.name}: ${s.n_failed} failed requests`), sum.flags.join("\n"));
      assert.ok(sum.flags.some((x: string) => x.startsWith(`vllm-${lv.name}: no container log found`)));
      const row = `| ${lv.level} | ${s.n_ok} | ${fixed(s.output_tok_s, 1)} | ${fixed(s.achieved_rps, 2)} | `;
      assert.ok(text.includes(row), `${row}\n${text}`);
    }
  });

  test("a --prompts run (no declared lengths): a failed request's input_lens is its prompt's length, said in ik_input_lens; read back unchanged", async () => {
    const prompts = join(dir, "p.jsonl");
    await writeFile(prompts, Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: `p${i}`, bucket: "short", messages: [{ role: "user", content: `prompt number ${i} ${"word ".repeat(i)}` }] })).join("\n") + "\n");
    const r = await bench(["--prompts", prompts, "--mode", "load", "--rates", "40", "--requests", "18"]);
    assert.equal(r.code, 0, r.stderr);
    const id = JSON.parse(r.stdout).data.measurement;
    const out = join(dir, "vllm-prompts");
    const e = await runIk(["export", id, "--format", "vllm", "--out", out], { env, timeoutMs: 30_000 });
    assert.equal(e.code, 0, e.stderr);
    const { rows } = await measured(id);
    const mine = rows.sort((a, b) => a.t_send_ns - b.t_send_ns);
    assert.ok(mine.every((x) => x.target_prompt_tokens === undefined), "a --prompts set declares no lengths");
    const f = JSON.parse(await readFile(join(out, "vllm-r40.json"), "utf8"));
    const failed = mine.flatMap((x, i) => (x.ok ? [] : [i]));
    assert.ok(failed.length > 0, "the mock's faults should have failed some requests");
    const counted = new Set(mine.filter((x) => x.ok).map((x) => x.id));
    let estimated = 0;
    mine.forEach((x, i) => {
      if (x.ok) assert.equal(f.input_lens[i], x.prompt_tokens);
      // every prompt is sent 3 times: where another request of it was counted, that length, never 0
      else if (counted.has(x.id)) (estimated++, assert.ok(f.input_lens[i] > 0, `request ${i}: ${f.input_lens[i]}`));
      else assert.equal(f.input_lens[i], 0);
    });
    assert.ok(estimated > 0, "no failed request of a prompt counted elsewhere");
    assert.match(f.ik_input_lens, new RegExp(`^input_lens is the server's usage\\.prompt_tokens except for ${failed.length} request`));
    assert.equal(f.total_input_tokens, mine.filter((x) => x.ok).reduce((a, x) => a + x.prompt_tokens, 0));
    const back = await runIk(["summarize", "vllm", "--runs", join(out, "runs.tsv"), "--results", out, "--json"], { env, timeoutMs: 30_000 });
    assert.equal(back.code, 0, back.stderr);
    const cell = JSON.parse(back.stdout).runs[0];
    const okRows = mine.filter((x) => x.ok);
    close(cell.mean_in, okRows.reduce((a, x) => a + x.prompt_tokens, 0) / okRows.length, "mean_in: successful requests only");
    assert.equal(cell.completed, okRows.length);
    assert.equal(cell.failed, failed.length);
  });

  test("closed loop: max_concurrency N and request_rate inf", async () => {
    const r = await bench(["--mode", "load", "--closed-loop", "--concurrency", "2", "--duration-s", "1"]);
    assert.equal(r.code, 0, r.stderr);
    const out = join(dir, "closed");
    const e = await runIk(["export", JSON.parse(r.stdout).data.measurement, "--format", "vllm", "--out", out], { env, timeoutMs: 30_000 });
    assert.equal(e.code, 0, e.stderr);
    const f = JSON.parse(await readFile(join(out, "vllm-c2.json"), "utf8"));
    assert.equal(f.max_concurrency, 2);
    assert.equal(f.request_rate, "inf");
    assert.match(f.ik_arrivals, /^closed loop: 2 workers/);
    assert.ok(f.max_concurrent_requests <= 2 && f.max_concurrent_requests >= 1);
    assert.match(await readFile(join(out, "runs.tsv"), "utf8"), /^vllm-c2\tvllm-closed-loop\t2\t/m);
  });

  test("a single-mode record: --format vllm refused (64); csv one row per bucket; jsonl every row", async () => {
    const r = await bench(["--limit-per-bucket", "1", "--rounds", "1", "--resamples", "100"]);
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout);
    const v = await runIk(["export", rec.evidence_id, "--format", "vllm", "--out", join(dir, "single")], { env, timeoutMs: 30_000 });
    assert.equal(v.code, 64);
    assert.equal(v.stderr.trim().split("\n").length, 1);
    assert.match(v.stderr, /^ik: --format vllm: .* is a single-mode record: .*; use --format csv or --format jsonl/);
    const c = await runIk(["export", join(dir, "runs", rec.evidence_id, "evidence.json"), "--format", "csv", "--out", join(dir, "single")], { env, timeoutMs: 30_000 });
    assert.equal(c.code, 0, c.stderr);
    const lines = (await readFile(join(dir, "single", `${rec.evidence_id}.csv`), "utf8")).trimEnd().split("\r\n");
    const head = csvSplit(lines[0]);
    assert.equal(lines.length - 1, Object.keys(rec.data.buckets).length);
    assert.ok(lines.slice(1).every((l) => csvSplit(l).length === head.length));
    assert.equal(csvSplit(lines[1])[head.indexOf("percentile_method")], "nearest rank (ik); CIs over rounds");
    assert.ok(lines.slice(1).every((l) => csvSplit(l)[head.indexOf("complete")] === "true"), "a complete record's rows say so");
    for (const line of lines.slice(1)) {
      const cells = csvSplit(line);
      const b = rec.data.buckets[cells[head.indexOf("bucket")]];
      // a bucket whose only request failed has no TTFT: an empty cell
      assert.equal(cells[head.indexOf("ttft_ms_median")], b.ttft_ms ? String(b.ttft_ms.median) : "");
      assert.equal(Number(cells[head.indexOf("n_requests")]), b.n_requests);
    }
    const j = await runIk(["export", rec.evidence_id, "--format", "jsonl", "--out", join(dir, "single")], { env, timeoutMs: 30_000 });
    assert.equal(j.code, 0, j.stderr);
    const got = jsonl(await readFile(join(dir, "single", `${rec.evidence_id}.requests.jsonl`), "utf8"));
    const { rows } = await measured(rec.evidence_id);
    assert.deepEqual(got, rows.map((x) => ({ evidence_id: rec.evidence_id, ...x })));
  });

  test("csv of a load record: one row per level with the record's numbers", async () => {
    const id = loadCapacity.data.measurement;
    const c = await runIk(["export", id, "--format", "csv", "--out", join(dir, "csv")], { env, timeoutMs: 30_000 });
    assert.equal(c.code, 0, c.stderr);
    const lines = (await readFile(join(dir, "csv", `${id}.csv`), "utf8")).trimEnd().split("\r\n");
    const head = csvSplit(lines[0]);
    const { record } = await measured(id);
    assert.equal(lines.length - 1, record.data.levels.length);
    record.data.levels.forEach((lv: any, i: number) => {
      const cells = csvSplit(lines[i + 1]);
      assert.equal(cells[head.indexOf("name")], lv.name);
      assert.equal(Number(cells[head.indexOf("n_ok")]), lv.summary.n_ok);
      assert.equal(Number(cells[head.indexOf("ttft_ms_p95")]), lv.summary.ttft_ms.p95);
      assert.equal(Number(cells[head.indexOf("output_tok_s")]), lv.summary.output_tok_s);
    });
  });

  test("an output that cannot be written is exit 74 naming it (ik export, ik report); a folder where a file goes is 64, and a file where a folder goes; nothing half-written", async () => {
    const id = loadCapacity.data.measurement;
    const ex = await runIk(["export", id, "--format", "csv", "--out", "/proc/ik-export-test"], { env, timeoutMs: 30_000 });
    assert.equal(ex.code, 74, ex.stderr);
    assert.match(ex.stderr, /^ik: \/proc\/ik-export-test: cannot write/m);
    const rp = await runIk(["report", id, "--out", "/proc/ik-report-test.md"], { env, timeoutMs: 30_000 });
    assert.equal(rp.code, 74, rp.stderr);
    assert.match(rp.stderr, /^ik: \/proc\/ik-report-test\.md: cannot write/m);
    // --out naming an existing file: 64 naming it, the file untouched (was an EEXIST crash, 70)
    const file = join(dir, "a-file");
    await writeFile(file, "keep\n");
    for (const format of ["csv", "vllm"]) {
      const r = await runIk(["export", id, "--format", format, "--out", file], { env, timeoutMs: 30_000 });
      assert.equal(r.code, 64, r.stderr);
      assert.equal(r.stderr, `ik: --out ${file}: is a file, not a folder; give a folder to write the files in (it is created if it does not exist)\n`);
      assert.equal(await readFile(file, "utf8"), "keep\n");
    }
    const folder = await runIk(["report", id, "--html", dir], { env, timeoutMs: 30_000 });
    assert.equal(folder.code, 64, folder.stderr);
    assert.match(folder.stderr, /is a folder, not a file; give the path of a file to write/);
  });

  test("an altered record is refused (65); an unknown RECORD too", async () => {
    const id = loadCapacity.data.measurement;
    const copy = join(dir, "altered", id);
    await cp(join(dir, "runs", id), copy, { recursive: true });
    const p = join(copy, "requests.jsonl");
    await writeFile(p, (await readFile(p, "utf8")).replace('"ok":true', '"ok":false'));
    const r = await runIk(["export", copy, "--format", "vllm", "--out", join(dir, "x")], { env, timeoutMs: 30_000 });
    assert.equal(r.code, 65);
    assert.match(r.stderr, /^ik: export .*: .*requests\.jsonl.* changed/);
    const u = await runIk(["export", "nope", "--format", "csv", "--out", join(dir, "x")], { env, timeoutMs: 30_000 });
    assert.equal(u.code, 65);
    assert.match(u.stderr, /^ik: export nope: 'nope' is neither a record directory, an evidence\.json, nor an evidence id; /);
    for (const x of [r, u]) assert.equal(x.stderr.trim().split("\n").length, 1, x.stderr);
  });
});
