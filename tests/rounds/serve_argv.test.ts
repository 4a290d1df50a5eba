/** The child bench serve command of a rounds cell, and what a cell reads back from it (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { dropFlag, flagValue, shellSplit } from "../../lib/cli/argv_words.ts";
import { checkLiveLabels, resolveJsonSetting, scheduleFixedBy, type ServeContext, serveArgv } from "../../lib/rounds/serve_argv.ts";
import { cellStatus, parseServeOutput, recordBucketMetrics, referenceE2eMs, resolvedSummary, roundMetricsFromRows } from "../../lib/rounds/cell_metrics.ts";

const ctx = (o: Partial<ServeContext> = {}): ServeContext => ({
  base_url: "http://127.0.0.1:8001", model: "m", prompts: "/p/set.jsonl", mode: "single", engine_kind: "vllm", label: "a", round: 2,
  run_dir: "/r", engine_version: null, extend: null, ref_e2e_ms: null, extra_body: null, chat_template_kwargs: null, ...o,
});
const IK = ["/opt/ik"];

describe("shellSplit", () => {
  test("quotes and escapes as a POSIX shell, no expansion", () => {
    assert.deepEqual(shellSplit(`--max-tokens 64 --extra-body '{"a": 1}' "x y" a\\ b "q\\"q" $HOME`), ["--max-tokens", "64", "--extra-body", '{"a": 1}', "x y", "a b", 'q"q', "$HOME"]);
    assert.deepEqual(shellSplit("  "), []);
    assert.deepEqual(shellSplit("''"), [""]);
  });
  test("an unterminated quote is a usage error naming the flag", () => {
    assert.throws(() => shellSplit("--x 'oops", "--serve-args"), (e: unknown) => e instanceof IkError && e.code === 64 && /--serve-args/.test(e.oneLine()));
  });
});

describe("flags inside --serve-args", () => {
  test("flagValue takes the last value in both spellings; dropFlag removes every copy", () => {
    const w = ["--rates", "1,2", "--extra-body={\"a\":1}", "--rates=4"];
    assert.equal(flagValue(w, "--rates"), "4");
    assert.equal(flagValue(w, "--extra-body"), '{"a":1}');
    assert.equal(flagValue(w, "--seed"), null);
    assert.deepEqual(dropFlag(w, "--rates"), ['--extra-body={"a":1}']);
  });
  test("scheduleFixedBy names the flag that fixes the load schedule", () => {
    assert.equal(scheduleFixedBy(["--concurrency", "1,2"]), null);
    assert.equal(scheduleFixedBy(["--max-tokens", "8", "--ref-e2e-ms=250"]), "--ref-e2e-ms");
    assert.equal(scheduleFixedBy(["--closed-loop"]), "--closed-loop");
    assert.equal(scheduleFixedBy(["--rates", "1"]), "--rates");
  });
});

describe("serveArgv", () => {
  test("default: the running ik, the cell's flags, --rounds 1 and --extend in single mode, then --serve-args", () => {
    const a = serveArgv(null, IK, ctx({ extend: "serve_benchmark-x", engine_version: "0.11" }), ["--max-tokens", "16"]);
    assert.deepEqual(a, ["/opt/ik", "bench", "serve", "--base-url", "http://127.0.0.1:8001", "--model", "m", "--prompts", "/p/set.jsonl", "--mode", "single",
      "--engine-kind", "vllm", "--label", "a", "--run-dir", "/r", "--rounds", "1", "--first-round", "1", "--extend", "serve_benchmark-x", "--engine-version", "0.11", "--max-tokens", "16"]);
    const first = serveArgv(null, ["bun", "/src/cli.ts"], ctx(), []);
    assert.deepEqual(first.slice(0, 4), ["bun", "/src/cli.ts", "bench", "serve"]);
    assert.ok(!first.includes("--extend"));
  });
  test("load mode: no --rounds, the shared --ref-e2e-ms appended (also after a template)", () => {
    const a = serveArgv(null, IK, ctx({ mode: "load", ref_e2e_ms: 123.456789 }), ["--concurrency", "1,4"]);
    assert.ok(!a.includes("--rounds"));
    assert.deepEqual(a.slice(-4), ["--ref-e2e-ms", "123.456789", "--concurrency", "1,4"]);
    const t = serveArgv("{ik} bench serve --base-url {base_url} --model {model}", IK, ctx({ mode: "load", ref_e2e_ms: 50 }), []);
    assert.deepEqual(t, ["/opt/ik", "bench", "serve", "--base-url", "http://127.0.0.1:8001", "--model", "m", "--ref-e2e-ms", "50"]);
  });
  test("a template with placeholders is used as written; without, it replaces the program part; an unknown one is refused", () => {
    const t = serveArgv("wrap --url={base_url} --r {round} --l {label}", IK, ctx(), []);
    assert.deepEqual(t, ["wrap", "--url=http://127.0.0.1:8001", "--r", "2", "--l", "a"]);
    const p = serveArgv("/other/ik bench serve", IK, ctx(), []);
    assert.equal(p[0], "/other/ik");
    assert.ok(p.includes("--base-url"));
    assert.throws(() => serveArgv("x {nope}", IK, ctx(), []), (e: unknown) => e instanceof IkError && e.code === 64 && /\{nope\}/.test(e.oneLine()));
  });
  test("the one resolved extra body and template kwargs are sent once; copies in --serve-args are dropped", () => {
    const a = serveArgv(null, IK, ctx({ extra_body: { top_k: 20, temperature: 0.6 }, chat_template_kwargs: { enable_thinking: false } }), ["--extra-body", '{"temperature":0.6,"top_k":20}', "--max-tokens", "8"]);
    assert.equal(a.filter((w) => w === "--extra-body").length, 1);
    assert.equal(a[a.indexOf("--extra-body") + 1], '{"temperature":0.6,"top_k":20}');
    assert.equal(a[a.indexOf("--chat-template-kwargs") + 1], '{"enable_thinking":false}');
    assert.deepEqual(a.slice(-2), ["--max-tokens", "8"]);
  });
});

describe("resolveJsonSetting", () => {
  const base = { flag: "--extra-body", manifestKey: "extra_body", serveArgs: [] as string[] };
  test("flag, else manifest, else --serve-args, each with its source", () => {
    assert.deepEqual(resolveJsonSetting({ ...base, flagValue: '{"a":1}', manifestValue: { a: 2 } }), { value: { a: 1 }, source: "--extra-body" });
    assert.deepEqual(resolveJsonSetting({ ...base, flagValue: undefined, manifestValue: { a: 2 } }), { value: { a: 2 }, source: "manifest workload.extra_body" });
    assert.deepEqual(resolveJsonSetting({ ...base, flagValue: undefined, manifestValue: null, serveArgs: ["--extra-body", '{"a":3}'] }), { value: { a: 3 }, source: "--extra-body in --serve-args" });
    assert.deepEqual(resolveJsonSetting({ ...base, flagValue: undefined, manifestValue: null }), { value: null, source: "none" });
  });
  test("an agreeing copy is fine; a conflicting one, bad JSON or a non-object is refused (64)", () => {
    assert.deepEqual(resolveJsonSetting({ ...base, flagValue: undefined, manifestValue: { b: 1, a: 2 }, serveArgs: ['--extra-body={"a":2,"b":1}'] }).value, { b: 1, a: 2 });
    const usage = (re: RegExp) => (e: unknown) => e instanceof IkError && e.code === 64 && re.test(e.oneLine());
    assert.throws(() => resolveJsonSetting({ ...base, flagValue: undefined, manifestValue: { a: 2 }, serveArgs: ["--extra-body", '{"a":3}'] }), usage(/give one value/));
    assert.throws(() => resolveJsonSetting({ ...base, flagValue: "{nope", manifestValue: null }), usage(/not valid JSON/));
    assert.throws(() => resolveJsonSetting({ ...base, flagValue: "[1]", manifestValue: null }), usage(/JSON object/));
  });
});

describe("what a cell reads back", () => {
  test("parseServeOutput: the JSON object, also after a log line; null for nothing", () => {
    assert.deepEqual(parseServeOutput('{"evidence_id":"x"}\n'), { evidence_id: "x" });
    assert.deepEqual(parseServeOutput('note: hello\n{"evidence_id":"y","a":{"b":1}}\n'), { evidence_id: "y", a: { b: 1 } });
    assert.equal(parseServeOutput(""), null);
    assert.equal(parseServeOutput("not json"), null);
    assert.equal(parseServeOutput("[1,2]"), null);
  });
  test("roundMetricsFromRows: only the latest round, medians over its ok rows, failures counted per bucket", () => {
    const rows = [
      { round: 0, bucket: "short", ok: true, decode_tok_s: 1000, ttft_ms: 1 },
      { round: 1, bucket: "short", ok: true, decode_tok_s: 100, ttft_ms: 10, tpot_ms: 10, e2e_ms: 100 },
      { round: 1, bucket: "short", ok: true, decode_tok_s: 300, ttft_ms: 30, tpot_ms: 3, e2e_ms: 50 },
      { round: 1, bucket: "long", ok: false, decode_tok_s: null },
      { round: 1, bucket: "long", ok: true, decode_tok_s: 50, ttft_ms: 90 },
    ];
    const [k, m] = roundMetricsFromRows(rows);
    assert.equal(k, 1);
    assert.deepEqual(Object.keys(m), ["long", "short", "all"]);
    assert.equal(m.short.decode_tok_s.value, 100, "nearest-rank median of [100, 300]: the 1st, an observed value");
    assert.equal(m.all.decode_tok_s.value, 100);
    assert.deepEqual(m.long.failed_requests, { value: 1, unit: "requests", stat: "count", n: 2 });
    assert.deepEqual(m.all.failed_requests, { value: 1, unit: "requests", stat: "count", n: 4 });
    assert.equal(m.long.tpot_ms, undefined);
    assert.deepEqual(roundMetricsFromRows([]), [null, {}]);
  });
  test("recordBucketMetrics: stats other than the median are appended; subjects give buckets; nulls skipped", () => {
    const m = recordBucketMetrics({ metrics: [
      { name: "n_star", value: 8, unit: "streams", stat: "threshold", subject: "all" },
      { name: "ttft_ms", value: 120, unit: "ms", stat: "p95_at_n_star" },
      { name: "goodput_rps", value: null, unit: "req/s", stat: "at_n_star" },
      { name: "decode_tok_s", value: 50, unit: "tok/s", stat: "median", subject: "engine/bucket=short" },
    ] });
    assert.deepEqual(Object.keys(m.all).sort(), ["n_star", "ttft_ms_p95_at_n_star"]);
    assert.equal(m.short.decode_tok_s.value, 50);
    assert.deepEqual(recordBucketMetrics(null), {});
    assert.equal(m.all.n_star.lower_bound, undefined);
  });
  test("recordBucketMetrics: an N* at the top of the record's grid, or marked lower_bound, keeps its name and is a lower bound", () => {
    const curve = [{ level: 1 }, { level: 4 }];
    const top = recordBucketMetrics({ metrics: [{ name: "n_star", value: 4, unit: "streams", stat: "threshold" }], data: { curve } });
    assert.equal(top.all.n_star.lower_bound, true);
    const below = recordBucketMetrics({ metrics: [{ name: "n_star", value: 1, unit: "streams", stat: "threshold" }], data: { curve } });
    assert.equal(below.all.n_star.lower_bound, undefined);
    const marked = recordBucketMetrics({ metrics: [{ name: "rate_star_rps", value: 2.5, unit: "req/s", stat: "lower_bound" }] });
    assert.deepEqual(Object.keys(marked.all), ["rate_star_rps"]);
    assert.equal(marked.all.rate_star_rps.lower_bound, true);
  });
  test("cellStatus: a failed child, no metrics, every request failed, ok", () => {
    const ok = { all: { failed_requests: { value: 0, n: 4 }, decode_tok_s: { value: 1 } } };
    assert.equal(cellStatus(2, {}, ok)[0], "serve_failed");
    assert.equal(cellStatus(0, null, ok)[0], "serve_failed");
    assert.equal(cellStatus(0, {}, {})[0], "serve_no_metrics");
    assert.deepEqual(cellStatus(0, {}, { all: { failed_requests: { value: 4, n: 4 } } }), ["serve_failed", "all 4 requests failed"]);
    assert.deepEqual(cellStatus(0, {}, ok), ["ok", null]);
  });
  test("referenceE2eMs: the record's own, else the measured record the capacity record cites", () => {
    assert.equal(referenceE2eMs({ data: { e2e_ref_ms: 42 } }, () => null), 42);
    assert.equal(referenceE2eMs({ data: { measurement: "m1" } }, (id) => (id === "m1" ? { data: { e2e_ref_ms: 7.5 } } : null)), 7.5);
    assert.equal(referenceE2eMs({ data: { measurement: "m1", e2e_ref_ms: null } }, () => ({ data: { e2e_ref_ms: 7.5 } })), null);
    assert.equal(referenceE2eMs({ data: { e2e_ref_ms: -1 } }, () => null), null);
  });
  test("resolvedSummary: the weakest status over rounds and the union of violations", () => {
    const rc = (status: string, violations: string[] = []) => ({ status, version: "1", warnings: 0, unknown_settings: [], violations, unverified: [], self_reported: [], file: "f" });
    const s = resolvedSummary([
      { label: "a", resolved_config: rc("RESOLVED") }, { label: "a", resolved_config: rc("UNPROVEN", ["[HARD GATE] x"]) },
      { label: "b", resolved_config: rc("SELF_REPORTED") }, { label: "b", resolved_config: rc("RESOLVED") },
    ], ["a", "b", "c"]);
    assert.equal(s.a.status, "UNPROVEN");
    assert.deepEqual(s.a.violations, ["[HARD GATE] x"]);
    assert.equal(s.b.status, "SELF_REPORTED");
    assert.equal(s.c.status, "UNPROVEN");
    assert.equal(s.c.rounds, 0);
  });
});

describe("checkLiveLabels", () => {
  const key = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2";
  const engines = [{ label: "vllm-0.11", where: "engines[0]" }, { label: key, where: "engines[1]" }];
  const refused = (template: string | null, args: string[]) => {
    try {
      checkLiveLabels(template, args, engines);
      return null;
    } catch (e) {
      assert.ok(e instanceof IkError && e.code === 64, String(e));
      assert.ok(!e.message.includes(key), e.message);
      return e.message;
    }
  };
  test("live metrics in --serve-args or the template: a secret-looking label is refused, naming its place", () => {
    assert.match(refused(null, ["--prometheus-remote-write", "http://127.0.0.1:9090/api/v1/write"]) ?? "", /--prometheus-remote-write.*engines\[1\]/);
    assert.match(refused(null, ["--metrics-listen=127.0.0.1:0"]) ?? "", /engines\[1\]/);
    assert.match(refused("{ik} bench serve --label {label} --metrics-listen 127.0.0.1:0", []) ?? "", /engines\[1\]/);
    assert.match(refused("my-ik bench serve --metrics-listen 127.0.0.1:0", []) ?? "", /engines\[1\]/);
  });
  test("no live metrics, or a template that passes no label: nothing to refuse", () => {
    assert.equal(refused(null, ["--max-tokens", "8"]), null);
    assert.equal(refused("{ik} bench serve --base-url {base_url} --metrics-listen 127.0.0.1:0", []), null);
    checkLiveLabels(null, ["--metrics-listen", "127.0.0.1:0"], [engines[0]]);
  });
});

