/**
 * The selftest's judging, on synthetic rows and mock-log lines (pure, no processes, both
 * runtimes): a correct client passes, a 5 ms TTFT bias and a 5 % TPOT bias fail, a busy host is
 * BUSY (neither), and the request log parses and pairs. Budget: < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { atMost, type Check, equal, median, near, whenBusy } from "../../lib/selftest/checks.ts";
import { packedModelTpot } from "../../lib/selftest/packed_checks.ts";
import {
  type MockRequestLog,
  pairByPrompt,
  parseRequestLog,
  parseRequestLogLine,
} from "../../lib/selftest/request_log.ts";
import type { Paired } from "../../lib/selftest/series.ts";
import { everyRow } from "../../lib/selftest/series.ts";
import { busyIfStarved, nearMiss, timingChecks, type TimingTruth, withRerun } from "../../lib/selftest/timing_checks.ts";
import { groupSummary, nextStepLine, overallVerdict, renderSelftest, verdictLine } from "../../lib/report/terminal/checks_table.ts";

/** A deterministic ± noise in ms (no Math.random: the same every run). */
const noise = (i: number, amp: number) => amp * Math.sin(1.7 * i + 0.3);

/** Nine requests of a tpe-3 ids run (n = 32, k = 3, tpot 5, ttft 40), as mock and client saw them. */
function run(opts: { ttftBias?: number; tpotScale?: number; late?: number; lagMs?: number } = {}): Paired[] {
  const out: Paired[] = [];
  for (let i = 0; i < 9; i++) {
    const first = 40 + 0.3 + (opts.late ?? 0) + Math.abs(noise(i, 0.2));
    const last = first + 29 * 5 + noise(i + 4, 0.2);
    const lagFirst = (opts.lagMs ?? 0.5) + Math.abs(noise(i + 1, 0.3));
    const lagLast = (opts.lagMs ?? 0.5) + Math.abs(noise(i + 2, 0.3));
    const tFirst = first + lagFirst;
    const span = last + lagLast - tFirst;
    const row = {
      ok: true,
      ttft_ms: tFirst + (opts.ttftBias ?? 0),
      tpot_ms: (span / 29) * (opts.tpotScale ?? 1),
      n_tokens: 32,
      k_first: 3,
    } as unknown as Paired["row"];
    const log: MockRequestLog = {
      serial: i + 1,
      prompt: 10 + i,
      gen: 32,
      acc: 0,
      prop: 0,
      firstMs: first,
      lastMs: last,
      recvWallMs: 0,
    };
    out.push({ row, log });
  }
  return out;
}

const TRUTH: TimingTruth = { ttftMs: 40, k: () => 3, modelTpotMs: () => 5, kNote: "k = 3" };
const status = (pairs: Paired[], prefix: string) =>
  timingChecks("g", pairs, TRUTH).checks.find((c) => c.name.startsWith(prefix))?.status;

describe("timing checks against the mock's clock", () => {
  test("a correct client passes every timing check", () => {
    const r = timingChecks("g", run(), TRUTH);
    assert.equal(r.busy, null);
    assert.deepEqual(
      r.checks.map((c) => c.status),
      ["PASS", "PASS", "PASS", "PASS"],
      JSON.stringify(r.checks),
    );
  });

  test("a 5 ms TTFT bias fails the lag check; the TPOT checks still pass", () => {
    assert.equal(status(run({ ttftBias: 5 }), "ttft lag vs mock first_ms"), "FAIL");
    assert.equal(status(run({ ttftBias: 5 }), "tpot vs mock clock"), "PASS");
  });

  test("a TTFT measured 5 ms early (negative bias) fails too", () => {
    assert.equal(status(run({ ttftBias: -5 }), "ttft lag vs mock first_ms"), "FAIL");
  });

  test("a 5 % TPOT bias fails against the mock clock and the model; the TTFT checks still pass", () => {
    assert.equal(status(run({ tpotScale: 1.05 }), "tpot vs mock clock"), "FAIL");
    assert.equal(status(run({ tpotScale: 1.05 }), "tpot vs configured model"), "FAIL");
    assert.equal(status(run({ tpotScale: 0.95 }), "tpot vs mock clock"), "FAIL");
    assert.equal(status(run({ tpotScale: 1.05 }), "ttft lag vs mock first_ms"), "PASS");
  });

  test("a wrong k (n − 1 where the first event carried 3) is a TPOT failure", () => {
    const pairs = run().map((p) => ({
      ...p,
      row: { ...p.row, tpot_ms: (p.row.tpot_ms as number) * 29 / 31 },
    }));
    assert.equal(status(pairs, "tpot vs mock clock"), "FAIL");
  });

  test("a host too busy to judge: a failing timing check is BUSY, a passing one stays PASS", () => {
    const r = timingChecks("g", run({ late: 6, ttftBias: 5 }), TRUTH);
    assert.match(r.busy ?? "", /host too busy: mock ran 6\.\d ms late/);
    const lag = r.checks.find((c) => c.name.startsWith("ttft lag"));
    assert.equal(lag?.status, "BUSY");
    assert.equal(r.checks.find((c) => c.name.startsWith("tpot vs mock clock"))?.status, "PASS");
  });

  test("a near miss (within twice the tolerance) is run again and judged on the second run; both are printed", async () => {
    const near1 = timingChecks("g", run({ ttftBias: 4.5 }), TRUTH);
    const lag1 = near1.checks.find((c) => c.name.startsWith("ttft lag"))!;
    assert.equal(lag1.status, "FAIL");
    assert.equal(nearMiss(lag1), true);
    assert.equal(nearMiss(timingChecks("g", run({ ttftBias: 9 }), TRUTH).checks[0]), false, "past twice the band");
    assert.equal(nearMiss(timingChecks("g", run({ tpotScale: 1.05 }), TRUTH).checks[2]), false, "5 % is past 2 × 2 %");
    let calls = 0;
    const out = await withRerun(() => Promise.resolve(timingChecks("g", run({ ttftBias: calls++ === 0 ? 4.5 : 0 }), TRUTH)));
    assert.equal(calls, 2);
    assert.equal(overallVerdict(out.checks), "PASS", "judged on the second run");
    const kept = out.checks.filter((c) => /\[first run: FAIL/.test(c.name));
    assert.equal(kept.length, 1);
    assert.equal(kept[0].status, "INFO");
    let twice = 0;
    const bias = await withRerun(() => Promise.resolve((twice++, timingChecks("g", run({ ttftBias: 5 }), TRUTH))));
    assert.equal(twice, 2);
    assert.equal(overallVerdict(bias.checks), "FAIL", "a real 5 ms bias fails the rerun too");
    let once = 0;
    await withRerun(() => Promise.resolve((once++, timingChecks("g", run(), TRUTH))));
    assert.equal(once, 1, "a pass is not rerun");
  });

  test("a timing check still failing while ik got < 80 % of a CPU is BUSY; the probe runs only on a FAIL", async () => {
    let probes = 0;
    const starved = () => (probes++, 0.5);
    const bias = await withRerun(() => Promise.resolve(timingChecks("g", run({ ttftBias: 5 }), TRUTH)), starved);
    assert.equal(probes, 1, "probed once, after the judged run");
    assert.equal(overallVerdict(bias.checks), "BUSY");
    const lag = bias.checks.find((c) => c.name.startsWith("ttft lag") && !c.name.includes("[first run"));
    assert.equal(lag?.status, "BUSY");
    assert.match(lag?.expected ?? "", /host too busy: ik got 50 % of a CPU/);
    assert.match(bias.busy ?? "", /ik got 50 %/);
    // Given its CPU, the same bias FAILs; a pass never probes.
    const fed = await withRerun(() => Promise.resolve(timingChecks("g", run({ ttftBias: 5 }), TRUTH)), () => 0.95);
    assert.equal(overallVerdict(fed.checks), "FAIL");
    probes = 0;
    await withRerun(() => Promise.resolve(timingChecks("g", run(), TRUTH)), starved);
    assert.equal(probes, 0);
    // Only timing checks turn BUSY: a wrong count stays FAIL on a starved host.
    const other: Check = { ...timingChecks("g", run(), TRUTH).checks[0], name: "n_tokens = max_tokens", status: "FAIL" };
    const mixed = busyIfStarved({ busy: null, checks: [...timingChecks("g", run({ ttftBias: 5 }), TRUTH).checks, other] }, () => 0.5);
    assert.deepEqual(mixed.checks.map((c) => c.status), ["BUSY", "BUSY", "PASS", "PASS", "FAIL"]);
    // The load check names its own timed checks (the rate found, the TPOT).
    const load = busyIfStarved({ busy: null, checks: [other] }, () => 0.5, () => true);
    assert.deepEqual(load.checks.map((c) => c.status), ["BUSY"]);
  });

  test("one stream of nine reaching ik in one read (no TPOT) is a held-up host: BUSY; most of them is the client: FAIL", () => {
    const one = run();
    (one[4].row as { tpot_ms: number | null }).tpot_ms = null;
    const r = timingChecks("g", one, TRUTH);
    assert.match(r.busy ?? "", /1 of 9 requests' tokens all reached ik in one read/);
    const tpot = r.checks.find((c) => c.name.startsWith("tpot vs mock clock"));
    assert.equal(tpot?.status, "BUSY", "8 TPOTs: cannot be judged, and the host is why");
    assert.equal(r.checks.find((c) => c.name.startsWith("ttft lag"))?.status, "PASS");
    const all = run().map((p) => ({ ...p, row: { ...p.row, tpot_ms: null } as Paired["row"] }));
    const rAll = timingChecks("g", all, TRUTH);
    assert.equal(rAll.busy, null);
    assert.equal(rAll.checks.find((c) => c.name.startsWith("tpot vs mock clock"))?.status, "FAIL");
  });

  test("fewer than 9 requests cannot be judged", () => {
    const r = timingChecks("g", run().slice(0, 8), TRUTH);
    assert.equal(r.checks.length, 1);
    assert.equal(r.checks[0].status, "FAIL");
  });

  test("numbers are numbers: value, unit, expected_value and tolerance", () => {
    const c = timingChecks("g", run(), TRUTH).checks[0];
    assert.equal(typeof c.value, "number");
    assert.equal(c.unit, "ms");
    assert.equal(c.expected_value, 0);
    assert.deepEqual(c.tolerance, { below: 0.5, above: 4 });
  });
});

describe("the packed-event model", () => {
  test("tpe 3, 32 tokens: the mock spends 29 × tpot between first and last events", () => {
    assert.equal(packedModelTpot(32, 3, 5, true), 5);
    assert.equal(packedModelTpot(32, 3, 5, false), (29 * 5) / 31);
    assert.equal(packedModelTpot(2, 3, 5, false), 0);
  });
});

describe("the mock's request log", () => {
  const line =
    "ik-request serial=3 prompt=12 cached=0 gen=32 acc=5 prop=42 first_ms=40.512 last_ms=185.004 recv_wall_ms=1764582000123.456";
  test("parses every field; '-' is null", () => {
    assert.deepEqual(parseRequestLogLine(line), {
      serial: 3,
      prompt: 12,
      gen: 32,
      acc: 5,
      prop: 42,
      firstMs: 40.512,
      lastMs: 185.004,
      recvWallMs: 1764582000123.456,
    });
    const none = parseRequestLogLine(
      "ik-request serial=4 prompt=0 cached=0 gen=0 acc=0 prop=0 first_ms=- last_ms=- recv_wall_ms=1.000",
    );
    assert.equal(none?.firstMs, null);
    assert.equal(parseRequestLogLine("ik mock: listening on http://127.0.0.1:1"), null);
    assert.equal(parseRequestLog(`noise\n${line}\nik mock: x\n${line}\n`).length, 2);
  });

  test("pairs requests with lines by prompt length, whatever order the mock finished them in", () => {
    const logs = [12, 10, 11].map((prompt, i) => ({
      serial: i + 1,
      prompt,
      gen: prompt,
      acc: 0,
      prop: 0,
      firstMs: 1,
      lastMs: 2,
      recvWallMs: 0,
    }));
    const paired = pairByPrompt([0, 1, 2], logs);
    assert.ok(Array.isArray(paired));
    assert.deepEqual(paired.map((l) => l.prompt), [10, 11, 12]);
    assert.match(pairByPrompt([0, 1], logs) as string, /logged 3 requests, 2 were sent/);
    assert.match(pairByPrompt([0, 1, 2], [logs[0], logs[0], logs[1]]) as string, /same prompt length/);
  });
});

describe("check helpers and the verdict", () => {
  test("near, atMost, equal, everyRow, median", () => {
    assert.equal(near("g", "x", 61, 60, { below: 1, above: 12 }).status, "PASS");
    assert.equal(near("g", "x", 58.9, 60, { below: 1, above: 12 }).status, "FAIL");
    assert.equal(near("g", "x", null, 60, { below: 1, above: 12 }).status, "FAIL");
    assert.equal(near("g", "x", null, 60, { below: 1, above: 12 }).value, null);
    assert.equal(atMost("g", "x", 15, 15).status, "PASS");
    assert.equal(atMost("g", "x", 15.1, 15).status, "FAIL");
    assert.equal(equal("g", "x", 24, 24).value, 24);
    assert.equal(equal("g", "x", undefined, 24).status, "FAIL");
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2, "lib/stats' nearest rank, as everywhere in ik");
    assert.equal(median([]), null);
    const pairs = run();
    assert.equal(everyRow("g", "n", pairs, (p) => p.row.n_tokens, (p) => p.log.gen).status, "PASS");
    const bad = everyRow(
      "g",
      "n",
      pairs.map((p, i) => (i === 4 ? { ...p, row: { ...p.row, n_tokens: 11 } } : p)),
      (p) => p.row.n_tokens,
      (p) => p.log.gen,
    );
    assert.equal(bad.status, "FAIL");
    assert.match(bad.measured, /request 5: 11/);
    assert.equal(everyRow("g", "n", [], () => 1, () => 1).status, "FAIL", "no rows is no pass");
  });

  test("any FAIL fails; else any BUSY is inconclusive; none at all fails", () => {
    const pass = near("g", "x", 1, 1, { below: 0, above: 0 });
    const fail = near("g", "x", 2, 1, { below: 0, above: 0 });
    const busy = whenBusy(fail, "host too busy");
    assert.equal(busy.status, "BUSY");
    assert.equal(overallVerdict([pass]), "PASS");
    assert.equal(overallVerdict([pass, busy]), "BUSY");
    assert.equal(overallVerdict([busy, fail]), "FAIL");
    assert.equal(overallVerdict([]), "FAIL");
    assert.match(verdictLine([pass, busy], 1), /^selftest: INCONCLUSIVE: 1 passed, 0 failed, 1 inconclusive/);
  });
});

describe("the default human view", () => {
  const checks = [
    ...timingChecks("vllm", run(), TRUTH).checks,
    ...timingChecks("sglang", run({ ttftBias: 5 }), TRUTH).checks,
    { group: "headroom", name: "c=1 events/s", measured: "120", expected: "", status: "INFO" as const, value: 120, unit: null, expected_value: null, tolerance: null },
  ];
  test("a line per group, then only the FAIL and BUSY rows; --verbose gives every row", () => {
    const text = renderSelftest(checks, false, false);
    assert.match(groupSummary(checks), /vllm\s+4 passed\n\s+sglang\s+2 passed, 2 FAILED\n\s+headroom\s+0 passed, 1 reported/);
    assert.match(text, /sglang\s+│\s+ttft lag vs mock first_ms/);
    assert.doesNotMatch(text, /vllm\s+│/, "no PASS row by default");
    assert.match(renderSelftest(checks, false, true), /vllm\s+│\s+ttft lag vs mock first_ms/);
    assert.match(nextStepLine(checks), /--verbose/);
    assert.equal(nextStepLine(checks.slice(0, 4)), "");
  });
});
