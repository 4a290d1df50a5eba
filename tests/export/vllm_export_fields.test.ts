/**
 * `ik export --format vllm` on hand-made load records (no server): max_concurrency is the
 * record's in-flight cap (`ik bench vllm --max-concurrency N`), else the closed loop's workers,
 * else null, and runs.tsv's conc follows it; request_goodput is vLLM's goodput recomputed from the
 * file's own arrays with the record's SLO as --goodput thresholds (ik_goodput says so); runs.tsv's
 * warmups sit on the first level only (warm-ups plus the reference requests of an open-loop
 * --concurrency run); ik_tpot says whose TPOT the file holds. In-process, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ExportLevel, ExportSource } from "../../lib/export/mod.ts";
import { vllmExportFiles } from "../../lib/export/mod.ts";
import { requestsBeforeLevels } from "../../lib/export/vllm_export.ts";

type Obj = Record<string, unknown>;

/** A request: ttft and e2e in ms, n output tokens in `events` events (the first carrying `kFirst`). */
interface Req {
  ttft: number;
  e2e: number;
  n: number;
  ok?: boolean;
}

/** A level of hand-made rows, sent 100 ms apart; the level's window is the first send to the last end. */
function level(name: string, value: number, reqs: Req[], entry: Obj = {}): ExportLevel {
  const rows: Obj[] = reqs.map((r, i) => {
    const send = 1e12 + i * 100e6;
    const ok = r.ok !== false;
    return {
      level: name, ok, n_tokens: r.n, prompt_tokens: 10, ttft_ms: ok ? r.ttft : null, e2e_ms: ok ? r.e2e : null, t_send_ns: send, t_end_ns: send + r.e2e * 1e6,
      send_lag_ms: 0.1, error: ok ? null : "HTTP 500", error_kind: ok ? null : "http",
    };
  });
  // the first event at ttft carries all but one token, the last event at e2e the other
  const outputs = reqs.map((r) => ({ text: "x", timings: { event_ms: r.n > 1 ? [r.ttft, r.e2e] : [r.ttft] } }));
  const end = Math.max(...rows.map((r) => Number(r.t_end_ns)));
  return { level: value, name, entry: { name, level: value, target_rate_rps: value, summary: { window_s: (end - 1e12) / 1e9, goodput_rps: 123 }, ...entry }, rows, outputs };
}

/** A load record around levels. */
function source(levels: ExportLevel[], o: { args?: Obj; data?: Obj; workload?: Obj } = {}): ExportSource {
  const record: Obj = {
    evidence_id: "serve_benchmark-20261207T000000Z-00000000", created_utc: "2026-12-07T00:00:00Z", complete: true,
    request: { args: { api: "chat", warmup: 2, ref_requests: 5, ...o.args } },
    identity: { model: { id: "m" }, workload: { burstiness: 1, slo: null, ...o.workload } },
    data: { label: "t", level_kind: "rate", open_loop: true, e2e_ref_source: null, ...o.data },
  };
  return { dir: "/nonexistent", record, evidenceId: String(record.evidence_id), mode: "load", rows: levels.flatMap((l) => l.rows), levels, notes: [] };
}

const reqs: Req[] = [
  { ttft: 100, e2e: 140, n: 5 }, // vLLM TPOT 10 ms
  { ttft: 100, e2e: 120, n: 5 }, // 5 ms
  { ttft: 300, e2e: 310, n: 3 }, // 5 ms, slow TTFT
  { ttft: 100, e2e: 100, n: 1 }, // one token: TPOT 0
  { ttft: 100, e2e: 900, n: 9 }, // 100 ms, slow e2e
  { ttft: 0, e2e: 0, n: 0, ok: false },
];

function files(src: ExportSource): { json: Record<string, Obj>; runs: string[][] } {
  const out = vllmExportFiles(src);
  const json: Record<string, Obj> = {};
  for (const f of out) if (f.name.endsWith(".json")) json[f.name] = JSON.parse(f.text);
  const runs = out.find((f) => f.name === "runs.tsv")!.text.trim().split("\n").map((l) => l.split("\t"));
  return { json, runs };
}

describe("ik export --format vllm: fields", () => {
  test("an in-flight cap is max_concurrency, named in ik_arrivals, and runs.tsv's conc", () => {
    for (const where of [{ args: { max_in_flight: 3, vllm: { max_concurrency: 3 } } }, { workload: { max_in_flight: 3 } }]) {
      const { json, runs } = files(source([level("r6", 6, reqs)], where));
      const f = json["t-r6.json"];
      assert.equal(f.max_concurrency, 3, JSON.stringify(where));
      assert.equal(f.request_rate, 6);
      assert.match(String(f.ik_arrivals), /^open loop: Poisson arrivals at request_rate, at most 3 in flight \(vLLM's --max-concurrency 3: /);
      assert.deepEqual(runs[1].slice(0, 3), ["t-r6", "t-rate", "3"]);
    }
    const { json, runs } = files(source([level("r6", 6, reqs)]));
    assert.equal(json["t-r6.json"].max_concurrency, null);
    assert.equal(runs[1][2], "6");
    // request_rate inf (ik bench vllm; the record's level is null, read as 0): every request due at once
    const inf = (o: Parameters<typeof source>[1] = {}) => files(source([level("rinf", 0, reqs, { level: null, target_rate_rps: null })], o));
    const all = inf();
    assert.deepEqual([all.json["t-rinf.json"].request_rate, all.json["t-rinf.json"].max_concurrency, all.runs[1][2]], ["inf", null, String(reqs.length)]);
    assert.equal(all.json["t-rinf.json"].ik_arrivals, "open loop: every request due at the level's start (request_rate inf)");
    const capped = inf({ args: { max_in_flight: 2 } });
    assert.deepEqual([capped.json["t-rinf.json"].max_concurrency, capped.runs[1][2]], [2, "2"]);
    const closed = files(source([level("c4", 4, reqs)], { data: { open_loop: false, level_kind: "concurrency" } }));
    assert.equal(closed.json["t-c4.json"].max_concurrency, 4);
    assert.equal(closed.runs[1][2], "4");
  });

  test("request_goodput is vLLM's goodput over the file's arrays with the record's SLO as --goodput", () => {
    const slo = { ttft_p95_ms: 200, tpot_p95_ms: 6, e2e_p95_ms: 500, max_fail: 0 };
    const { json } = files(source([level("r6", 6, reqs)], { workload: { slo } }));
    const f = json["t-r6.json"];
    // good under vLLM's rule: the 5 ms one and the one-token one (TPOT 0); ik's goodput_rps (123) is not copied
    const ok = (f.errors as string[]).flatMap((e, i) => (e === "" ? [i] : []));
    const lat = f.latencies as number[], ttft = f.ttfts as number[], out = f.output_lens as number[];
    const good = ok.filter((i) => ttft[i] <= 0.2 && (out[i] > 1 ? (lat[i] - ttft[i]) / (out[i] - 1) : 0) <= 0.006 && lat[i] <= 0.5).length;
    assert.equal(good, 2);
    assert.equal(f.request_goodput, good / (f.duration as number));
    assert.match(String(f.ik_goodput), /^request_goodput under vLLM's rule, as vllm bench serve --goodput ttft:200 tpot:6 e2el:500 computes it/);
    // only a TTFT target: TPOT and e2e are not checked
    const t = files(source([level("r6", 6, reqs)], { workload: { slo: { ttft_p95_ms: 200, tpot_p95_ms: null, e2e_p95_ms: null, max_fail: 0 } } })).json["t-r6.json"];
    assert.equal(t.request_goodput, 4 / (t.duration as number));
    assert.match(String(t.ik_goodput), /--goodput ttft:200 computes/);
    // no SLO: null, and no note
    const n = files(source([level("r6", 6, reqs)])).json["t-r6.json"];
    assert.equal(n.request_goodput, null);
    assert.equal(n.ik_goodput, undefined);
  });

  test("runs.tsv warmups: the warm-ups (and reference requests) on the first level only", () => {
    const rate = files(source([level("r4", 4, reqs), level("r8", 8, reqs)]));
    assert.deepEqual(rate.runs.slice(1).map((r) => [r[0], r[5]]), [["t-r4", "2"], ["t-r8", "0"]]);
    const conc = source([level("c2", 2, reqs), level("c4", 4, reqs)], { data: { level_kind: "concurrency", e2e_ref_source: "reference_requests" } });
    assert.equal(requestsBeforeLevels(conc), 7);
    assert.deepEqual(files(conc).runs.slice(1).map((r) => [r[0], r[5]]), [["t-c2", "7"], ["t-c4", "0"]]);
    // --ref-e2e-ms given: no reference requests were sent
    const given = source([level("c2", 2, reqs)], { data: { level_kind: "concurrency", e2e_ref_source: "ref_e2e_ms" } });
    assert.equal(requestsBeforeLevels(given), 2);
  });

  test("ik_tpot says the file's TPOT is vLLM's (latency − ttft) / (output − 1), not ik's k_first-based TPOT", () => {
    const f = files(source([level("r6", 6, reqs)])).json["t-r6.json"];
    assert.match(String(f.ik_tpot), /vLLM's TPOT, per request \(latency - ttft\) \/ \(output_len - 1\).*k_first/);
    // the TPOT blocks are that definition: 10, 5, 5, 100 ms over the requests with more than one token
    assert.ok(Math.abs((f.median_tpot_ms as number) - 7.5) < 1e-9, String(f.median_tpot_ms));
  });
});
