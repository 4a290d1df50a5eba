/**
 * The readers under `ik summarize vllm`: runs.tsv errors (file:line, exit 65), result-file drift
 * (JSONL, "inf", NaN/Infinity, `request_goodput:`, a sweep array), per-request rows from current
 * and legacy arrays, container lines, and Python-style number formatting. Pure, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { fixed, fmt, parseContainerLog, parseJsonValues, parseRuns, readVllmResult, requestRows } from "../../lib/summarize/mod.ts";
import { impossibleValues } from "../../lib/summarize/vllm_result.ts";
import { parseTsv } from "../../lib/summarize/tsv.ts";

const HEAD = "tag\tpass\tdataset\tconc\tserial_lo\tserial_hi\twarmups\tcatfile\trc\tcontainer";

function runsError(text: string): IkError {
  try {
    parseRuns(text, "u/runs.tsv");
  } catch (e) {
    assert.ok(e instanceof IkError, String(e));
    return e;
  }
  throw new Error("parsed");
}

describe("runs.tsv", () => {
  test("a good file", () => {
    const r = parseRuns(`${HEAD}\na\tA\trandom\t4\t0\t9\t1\t-\t0\tlogs/a.log\n\nb\t\tx\t2.5\t9\t9\t\t-\tNone\t-\n`, "runs.tsv");
    assert.equal(r.length, 2);
    assert.deepEqual({ ...r[0] }, { line: 2, tag: "a", pass: "A", dataset: "random", conc: 4, serialLo: 0, serialHi: 9, warmups: 1, catfile: "-", rc: "0", container: "logs/a.log" });
    assert.equal(r[1].pass, "-");
    assert.equal(r[1].conc, 2.5);
    assert.equal(r[1].warmups, 0);
    assert.equal(r[1].line, 4);
  });

  const cases: [string, string, RegExp][] = [
    ["empty", "", /^u\/runs\.tsv: the file is empty/],
    ["missing column", "tag\tdataset\tconc\n", /^u\/runs\.tsv:1: runs\.tsv lacks column\(s\) serial_lo, serial_hi/],
    ["only a header", `${HEAD}\n`, /^u\/runs\.tsv: no runs/],
    ["field count", `${HEAD}\na\tA\trandom\t4\t0\t9\n`, /^u\/runs\.tsv:2: 6 tab-separated field\(s\), the header has 10/],
    ["conc", `${HEAD}\na\tA\tr\tfour\t0\t9\t1\t-\t0\t-\n`, /^u\/runs\.tsv:2: conc 'four' is not a positive number/],
    ["conc 0", `${HEAD}\na\tA\tr\t0\t0\t9\t1\t-\t0\t-\n`, /^u\/runs\.tsv:2: conc '0'/],
    ["serial", `${HEAD}\na\tA\tr\t1\t-3\t9\t1\t-\t0\t-\n`, /^u\/runs\.tsv:2: serial_lo '-3' is not a non-negative integer/],
    ["serial order", `${HEAD}\na\tA\tr\t1\t9\t3\t1\t-\t0\t-\n`, /^u\/runs\.tsv:2: serial_hi 3 < serial_lo 9/],
    ["warmups", `${HEAD}\na\tA\tr\t1\t0\t3\tx\t-\t0\t-\n`, /^u\/runs\.tsv:2: warmups 'x'/],
    ["tag", `${HEAD}\n../a\tA\tr\t1\t0\t3\t1\t-\t0\t-\n`, /^u\/runs\.tsv:2: tag '\.\.\/a'/],
    ["duplicate", `${HEAD}\na\tA\tr\t1\t0\t3\t1\t-\t0\t-\na\tB\tr\t1\t3\t6\t1\t-\t0\t-\n`, /^u\/runs\.tsv:3: tag 'a' repeats line 2/],
    ["dataset", `${HEAD}\na\tA\t\t1\t0\t3\t1\t-\t0\t-\n`, /^u\/runs\.tsv:2: dataset is empty/],
    ["header repeats", "tag\ttag\n", /^u\/runs\.tsv:1: the header repeats column 'tag'/],
  ];
  for (const [name, text, re] of cases) {
    test(`malformed (${name}): a data error (65) naming file:line`, () => {
      const e = runsError(text);
      assert.equal(e.code, 65);
      assert.match(e.oneLine().replace(/^ik: /, ""), re);
      assert.equal(e.oneLine().split("\n").length, 1);
    });
  }
});

describe("result files", () => {
  test("JSONL from --append-result: the last object; 'inf'; the legacy goodput key; NaN/Infinity tokens", () => {
    const r = readVllmResult('{"completed": 1}\n{"completed": 2, "request_rate": "inf", "request_goodput:": 1.5, "std_ttft_ms": NaN, "x": [Infinity, -Infinity]}');
    assert.ok(r.ok);
    assert.equal(r.appended, 2);
    assert.equal(r.result.completed, 2);
    assert.equal(r.result.request_rate, Infinity);
    assert.equal(r.result.request_goodput, 1.5);
    assert.ok(Number.isNaN(r.result.std_ttft_ms as number));
    assert.deepEqual(r.result.x, [Infinity, -Infinity]);
  });

  test("the early benchmark_serving.py's request_inthroughput is the request rate (request_throughput wins when both)", () => {
    const old = readVllmResult('{"completed": 8, "request_inthroughput": 1.6, "input_throughput": 160.0, "output_throughput": 204.8}');
    assert.ok(old.ok);
    assert.equal(old.result.request_throughput, 1.6);
    const both = readVllmResult('{"request_throughput": 2.5, "request_inthroughput": 1.6}');
    assert.ok(both.ok);
    assert.equal(both.result.request_throughput, 2.5);
    assert.deepEqual(impossibleValues({ request_inthroughput: -1.6 }), ["request_inthroughput is -1.6, not a finite non-negative number"]);
  });

  test("--metadata keys are the user's strings where vLLM may leave them; a string under a key vLLM always writes is a FLAG", () => {
    // vLLM writes each --metadata KEY=VALUE as a string-valued key of the result, then its own
    // results over them (numbers, bare NaN/Infinity when non-finite): a string survives only under
    // a key vLLM did not write (input_throughput, a percentile block without a tokenizer, num_prompts).
    assert.deepEqual(impossibleValues({ target_throughput: "high", run_throughput: "x", output_throughput: 204.8 }), []);
    const always = ["request_throughput", "output_throughput", "total_token_throughput", "duration"];
    const metrics = [...always, "input_throughput", "input_sequence_throughput", "diffusion_committed_throughput", "request_goodput", "p99_ttft_ms", "median_tpot_ms", "mean_itl_ms", "p99.9_e2el_ms"];
    for (const k of metrics) {
      const str = always.includes(k) ? [`${k} is "n/a", not a finite non-negative number`] : [];
      assert.deepEqual(impossibleValues({ [k]: "n/a" }), str, `${k}: a string is ${always.includes(k) ? "a damaged file" : "metadata"}`);
      assert.deepEqual(impossibleValues({ [k]: NaN }), [`${k} is NaN, not a finite non-negative number`], k);
      assert.deepEqual(impossibleValues({ [k]: Infinity }), [`${k} is Infinity, not a finite non-negative number`], k);
      assert.deepEqual(impossibleValues({ [k]: -2 }), [`${k} is -2, not a finite non-negative number`], k);
      assert.deepEqual(impossibleValues({ [k]: true }), [`${k} is true, not a finite non-negative number`], k);
    }
    for (const k of ["num_prompts", "completed", "failed", "total_input_tokens", "total_output_tokens"]) {
      const damaged = k !== "num_prompts" && k !== "failed";
      assert.deepEqual(impossibleValues({ [k]: "40" }), damaged ? [`${k} is "40", not a count`] : [], `${k}: a string is ${damaged ? "a damaged file" : "metadata"}`);
      assert.deepEqual(impossibleValues({ [k]: 39.5 }), [`${k} is 39.5, not a count`], k);
      assert.deepEqual(impossibleValues({ [k]: NaN }), [`${k} is NaN, not a count`], k);
      assert.deepEqual(impossibleValues({ [k]: -1 }), [`${k} is -1, not a count`], k);
    }
    assert.deepEqual(impossibleValues({ request_goodput: null }), [], "no --goodput: null");
    // a non-number that is no string is shown cut, as JSON
    assert.deepEqual(impossibleValues({ completed: Array.from({ length: 1000 }, () => 1) }), ["completed is [1,1,1,1,1,1,1,1,1,1…(2001 chars), not a count"]);
  });

  test("failed as a string: metadata in a file from before vLLM wrote failed, a FLAG in one that writes it", () => {
    assert.deepEqual(impossibleValues({ failed: "3", completed: 7 }), []);
    assert.deepEqual(impossibleValues({ endpoint_type: "openai", failed: "3", completed: 7, max_concurrent_requests: 4 }), ['failed is "3", not a count']);
  });

  test("the reviewer's file: a string-valued --metadata input_throughput is no FLAG", () => {
    const r = readVllmResult('{"num_prompts": 1, "input_throughput": "n/a", "completed": 1, "failed": 0, "duration": 1.0, "output_throughput": 5.0}');
    assert.ok(r.ok);
    assert.deepEqual(impossibleValues(r.result), []);
    const bare = readVllmResult('{"num_prompts": 1, "input_throughput": NaN, "completed": 1, "failed": 0, "duration": 1.0, "output_throughput": Infinity}');
    assert.ok(bare.ok);
    assert.deepEqual(impossibleValues(bare.result), ["input_throughput is NaN, not a finite non-negative number", "output_throughput is Infinity, not a finite non-negative number"]);
  });

  test("strings that look like the tokens stay strings; pretty-printed appended objects split", () => {
    const v = parseJsonValues('{\n "a": "NaN Infinity",\n "b": [1, {"c": "}"}]\n}\n{"d": -1.5e3}');
    assert.deepEqual(v, [{ a: "NaN Infinity", b: [1, { c: "}" }] }, { d: -1500 }]);
  });

  test("unusable files say why, with the line", () => {
    assert.deepEqual(readVllmResult(""), { ok: false, reason: "the file is empty" });
    const bad = readVllmResult('{"a": 1}\n{"b": ');
    assert.ok(!bad.ok && /^line 2: not valid JSON/.test(bad.reason), JSON.stringify(bad));
    const arr = readVllmResult("[{}]");
    assert.ok(!arr.ok && /JSON array/.test(arr.reason));
  });
});

describe("per-request rows", () => {
  test("current layout: a failed request inside the arrays is not ok", () => {
    const { rows, layout } = requestRows({
      ttfts: [0.1, 0.0], output_lens: [5, 0], latencies: [0.5, 0.0], input_lens: [10, 12], itls: [[0.1, 0.1], []], errors: ["", "Timeout"],
      start_times: [1, 2],
    });
    assert.equal(layout, "detailed");
    assert.deepEqual(rows, [
      { ttft: 0.1, latency: 0.5, out: 5, inp: 10, frames: 2, ok: true },
      { ttft: 0, latency: 0, out: 0, inp: 12, frames: 0, ok: false },
    ]);
  });

  test("legacy layout (no latencies, no start_times): rows from ttfts/itls/output_lens/errors", () => {
    const withErrors = requestRows({ ttfts: [0.1, 0.0], output_lens: [5, 0], itls: [[0.1], []], errors: ["", "boom"] });
    assert.equal(withErrors.layout, "legacy");
    assert.deepEqual(withErrors.rows!.map((r) => r.ok), [true, false]);
    // vLLM fails a non-200 answer with error = response.reason or "": an empty error, TTFT 0.0, no output
    const emptyReason = requestRows({ ttfts: [0.05, 0.06, 0.0], output_lens: [256, 256, 0], itls: [[0.01], [0.01], []], errors: ["", "", ""] });
    assert.deepEqual(emptyReason.rows!.map((r) => r.ok), [true, true, false]);
    // no errors array either: a request that produced nothing is the failed one
    const bare = requestRows({ ttfts: [0.1, 0.0], output_lens: [5, 0] });
    assert.deepEqual(bare.rows!.map((r) => [r.ok, r.frames, r.inp]), [[true, null, null], [false, null, null]]);
  });

  test("no per-request arrays", () => {
    assert.deepEqual(requestRows({ completed: 3 }), { rows: null, layout: "none" });
  });
});

describe("container logs", () => {
  test("ik-request key=value anywhere in a line, sorted by serial; other lines ignored; bad ones reported", () => {
    const log = [
      "INFO 01-10 [logger.py] ik-request serial=3 prompt=10 cached=2 gen=5 acc=1 prop=4 first_ms=1.0",
      "ik-request serial=1 prompt=7 gen=3",
      "noise ik-requests serial=9 prompt=1 gen=1",
      "ik-request serial=2 prompt=x gen=3",
      "ik-request prompt=1 gen=1",
      "12:00:01 vllm.logger:ik-request serial=5 prompt=1 gen=2 extra=9",
    ].join("\n");
    const { recs, bad } = parseContainerLog(log);
    assert.deepEqual(recs, [
      { serial: 1, prompt: 7, cached: 0, gen: 3, acc: 0, prop: 0 },
      { serial: 3, prompt: 10, cached: 2, gen: 5, acc: 1, prop: 4 },
      { serial: 5, prompt: 1, cached: 0, gen: 2, acc: 0, prop: 0 },
    ]);
    assert.deepEqual(bad, [{ line: 4, why: "prompt=x is not a non-negative integer" }, { line: 5, why: "no serial=" }]);
  });
});

describe("number formatting as Python prints it", () => {
  test("fixed decimals, ties to even, non-finite, '-' for missing, widths", () => {
    assert.equal(fixed(2.5, 0), "2");
    assert.equal(fixed(3.5, 0), "4");
    assert.equal(fixed(0.125, 2), "0.12");
    assert.equal(fixed(0.375, 2), "0.38");
    assert.equal(fixed(1.005, 2), "1.00"); // 1.005 is below the tie in binary: Python prints 1.00 too
    assert.equal(fixed(-0.5, 0), "-0");
    assert.equal(fixed(Infinity, 1), "inf");
    assert.equal(fixed(NaN, 1), "nan");
    assert.equal(fmt(null, 2, 6), "     -");
    assert.equal(fmt(12.345, 1, 8), "    12.3");
  });
});

test("a binary file given as a table is refused as one, and none of its bytes are printed", () => {
  const bin = "\u007fELF\u0002\u0001\u0001\u0000\u0000\u0000garbage\tmore\n" + "x".repeat(600);
  assert.throws(() => parseTsv(bin, "runs.tsv"), (e: unknown) => {
    const err = e as IkError;
    assert.equal(err.code, 65);
    assert.equal(`${err.where}: ${err.message}`, "runs.tsv:1: is not a text table (byte 0x7f at character 1)");
    return true;
  });
  // A text table still parses.
  assert.deepEqual(parseTsv("a\tb\n1\t2\n", "t.tsv").rows[0].fields, { a: "1", b: "2" });
});
