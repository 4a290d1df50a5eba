/** The bench points plan: every problem named by point and field, credentials refused, placeholders (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { checkBaseUrl, isIkLoadTrial, parsePlan, substituteArgv, tokenLooking } from "../../lib/points/plan.ts";
import { judgeTrial } from "../../lib/load_trial/attainment.ts";
import { parseWorkload, requestsSha256, workloadFromPrompts } from "../../lib/load_trial/workload.ts";

const lt = (rate: string, reqs: string) => ["{ik}", "load-trial", "run", "--base", "{base}", "--expected-model", "{model}", "--workload", "w.json", "--rate", rate, "--requests", reqs, "--ttft", "2", "--tpot", "0.03", "--attainment", "0.95", "--out", "{point_dir}/client"];
const point = (o: Record<string, unknown> = {}) => ({ id: "p1", workload: { file: "w.json", rate_rps: 1, requests: 10 }, client_argv: lt("1", "10"), client_timeout_s: 60, drain_timeout_s: 30, ...o });
const plan = (...points: unknown[]) => JSON.stringify({ schema: 1, points });
const problems = (text: string) => {
  try {
    parsePlan(text, "plan.json");
  } catch (e) {
    assert.ok(e instanceof IkError);
    assert.equal(e.code, 65);
    return e.oneLine();
  }
  assert.fail("accepted");
};

describe("parsePlan", () => {
  test("a good plan is accepted as written", () => {
    const p = parsePlan(plan(point(), point({ id: "p2", workload: { file: "w.json", rate_rps: 2.5, requests: 20 }, client_argv: lt("2.5", "20") })), "plan.json");
    assert.equal(p.points.length, 2);
    assert.equal(p.points[1].workload.rate_rps, 2.5);
  });
  test("every problem at once, each naming its point and field, on one line", () => {
    const line = problems(JSON.stringify({ schema: 2, extra: 1, points: [
      point({ id: "bad id/x" }),
      point({ id: "p2", workload: { file: "", rate_rps: 0, requests: 1.5 }, client_timeout_s: -1 }),
      point({ id: "p3", client_argv: "sh -c x", drain_timeout_s: "30" }),
      point({ id: "p3" }),
    ] }));
    assert.equal(line.split("\n").length, 1);
    for (const want of [/schema must be 1/, /unknown field extra/, /point 'bad id\/x': id must be/, /point 'p2': workload.file/, /point 'p2': workload.rate_rps/, /point 'p2': workload.requests/,
      /point 'p2': client_timeout_s/, /point 'p3': client_argv must be a non-empty list/, /point 'p3': drain_timeout_s/, /point 'p3': id appears twice/, /plan\.json/]) {
      assert.match(line, want);
    }
  });
  test("an ik load-trial client must send the workload's rate and request count", () => {
    assert.match(problems(plan(point({ client_argv: lt("2", "10") }))), /point 'p1': client_argv --rate 2 does not match workload.rate_rps 1/);
    assert.match(problems(plan(point({ client_argv: lt("1", "11") }))), /--requests 11 does not match workload.requests 10/);
    assert.match(problems(plan(point({ client_argv: lt("1", "10").filter((w, i, a) => w !== "--rate" && a[i - 1] !== "--rate") }))), /--rate \(missing\)/);
    // It sends the workload the point declares (the same path, however spelled).
    assert.match(problems(plan(point({ client_argv: lt("1", "10").map((w) => (w === "w.json" ? "other.json" : w)) }))), /point 'p1': client_argv --workload other\.json is not workload\.file w\.json/);
    assert.match(problems(plan(point({ client_argv: lt("1", "10").filter((w, i, a) => w !== "--workload" && a[i - 1] !== "--workload") }))), /--workload \(missing\)/);
    parsePlan(plan(point({ client_argv: lt("1", "10").map((w) => (w === "w.json" ? "./w.json" : w)) })), "plan.json");
    // Its summary must land where the result and the report read it.
    assert.match(problems(plan(point({ client_argv: lt("1", "10").map((w) => (w === "{point_dir}/client" ? "{point_dir}/lt" : w)) }))), /point 'p1': client_argv --out \{point_dir\}\/lt: an ik load-trial run client writes to --out \{point_dir\}\/client/);
    parsePlan(plan(point({ client_argv: lt("1", "10").map((w) => (w === "{point_dir}/client" ? "{point_dir}/client/" : w)) })), "plan.json");
    // Another client is its own business.
    parsePlan(plan(point({ client_argv: ["python3", "client.py", "--rate", "9"] })), "plan.json");
    assert.equal(isIkLoadTrial(["/usr/local/bin/ik", "load-trial", "run"]), true);
    assert.equal(isIkLoadTrial(["python3", "load-trial", "run"]), false);
  });
  test("credentials anywhere in the plan are refused, naming where", () => {
    assert.match(problems(plan(point({ client_argv: [...lt("1", "10"), "--header", "Authorization: Bearer abc123"] }))), /points\[0\]\.client_argv\[\d+\] holds a Bearer token/);
    assert.match(problems(plan(point({ client_argv: [...lt("1", "10"), "--key", "sk-proj-abcdef123456"] }))), /an sk- key/);
    assert.match(problems(plan(point({ workload: { file: "https://h/w.json?access_token=x", rate_rps: 1, requests: 10 } }))), /secret-looking query parameter 'access_token'/);
    assert.equal(tokenLooking("https://h/x?max_tokens=5&model=m"), null);
    assert.equal(tokenLooking("--max-tokens"), null);
    assert.throws(() => checkBaseUrl("http://u:p@127.0.0.1:8000"), (e: unknown) => e instanceof IkError && e.code === 64);
    assert.throws(() => checkBaseUrl("http://127.0.0.1:8000/?api_key=1"), (e: unknown) => e instanceof IkError && e.code === 64);
    checkBaseUrl("http://127.0.0.1:8000/v1");
  });
  test("placeholders: unknown ones and an embedded {ik} are refused; substitution never splits a word", () => {
    assert.match(problems(plan(point({ client_argv: ["{ik}", "x", "{nope}"] }))), /unknown placeholder \{nope\}/);
    assert.match(problems(plan(point({ client_argv: ["x{ik}"] }))), /\{ik\} only as a whole word/);
    assert.deepEqual(substituteArgv(["{ik}", "--out", "{point_dir}/c", "--b={base}", "{model} {point_id}"], { base: "http://h:1", model: "m x", point_id: "p1", point_dir: "/o/p1" }, ["bun", "/s/cli.ts"]),
      ["bun", "/s/cli.ts", "--out", "/o/p1/c", "--b=http://h:1", "m x p1"]);
  });
  test("malformed JSON is one line naming the file", () => {
    assert.match(problems("{nope"), /plan\.json.*not valid JSON/);
  });
});

describe("load-trial verdict and workload", () => {
  const row = (o: Record<string, unknown>) => ({ ok: true, ttft_ms: 100, tpot_ms: 10, e2e_ms: 500, send_lag_ms: 1, ...o });
  test("attainment counts failed and unsent requests as misses; a request with no TPOT passes that part", () => {
    const v = judgeTrial([row({}), row({ tpot_ms: null }), row({ ttft_ms: 2500 }), row({ tpot_ms: 40 }), row({ ok: false, ttft_ms: null, error_kind: "http" })], 6, { ttftMs: 2000, tpotMs: 33.3 }, 0.3);
    assert.equal(v.met, 2);
    assert.equal(v.attainment, 2 / 6);
    assert.equal(v.attained, true);
    assert.deepEqual(v.misses, { failed: 1, ttft: 1, tpot: 1, unsent: 1 });
    assert.deepEqual(v.failures_by_kind, { http: 1 });
    assert.equal(v.validity.valid, false);
    assert.match(v.validity.reasons[0], /only 5 of 6/);
  });
  test("scheduling validity: median lag <= 5 ms and p99 <= 50 ms", () => {
    const base = Array.from({ length: 100 }, () => row({}));
    assert.equal(judgeTrial(base, 100, { ttftMs: 1e9, tpotMs: 1e9 }, 1).validity.valid, true);
    const slowP99 = base.map((r, i) => (i >= 98 ? { ...r, send_lag_ms: 60 } : r));
    assert.match(judgeTrial(slowP99, 100, { ttftMs: 1e9, tpotMs: 1e9 }, 1).validity.reasons.join(), /p99 send lag 60\.00 ms > 50 ms/);
    const slowMedian = base.map((r) => ({ ...r, send_lag_ms: 6 }));
    assert.match(judgeTrial(slowMedian, 100, { ttftMs: 1e9, tpotMs: 1e9 }, 1).validity.reasons.join(), /median send lag 6\.00 ms > 5 ms/);
  });
  test("a workload's sha256 covers its requests; an edited file is refused", () => {
    const w = workloadFromPrompts([{ id: "a", bucket: "short", messages: [{ role: "user", content: "hi" }], maxTokens: 8, kind: "chat", extra: { input_tokens: 1 } }], { n: 3, seed: 0, source: {}, defaultMaxTokens: 16 });
    assert.deepEqual(w.requests.map((r) => r.id), ["a#0", "a#1", "a#2"]);
    assert.equal(w.requests_sha256, requestsSha256(w.requests));
    parseWorkload(JSON.stringify(w), "w.json");
    // A UTF-8 byte-order mark before the JSON (an editor's) is not a parse error, here and in a plan.
    assert.equal(parseWorkload("\uFEFF" + JSON.stringify(w), "w.json").requests.length, 3);
    assert.equal(parsePlan("\uFEFF" + plan(point()), "plan.json").points.length, 1);
    const edited = { ...w, requests: w.requests.map((r, i) => (i === 1 ? { ...r, max_tokens: 9 } : r)) };
    assert.throws(() => parseWorkload(JSON.stringify(edited), "w.json"), (e: unknown) => e instanceof IkError && e.code === 65 && /does not match the requests/.test(e.oneLine()));
  });
});
