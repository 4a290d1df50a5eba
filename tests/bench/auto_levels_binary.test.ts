/**
 * `--rates auto` and `--concurrency auto` through dist/ik against the batching simulator (issue 20
 * §3): B = 4 slots, a 10 ms step, 8 output tokens, so the capacity is 1000·B/(L·A) = 50 req/s
 * (MOCK.md). Near-deterministic arrivals (`--burstiness 100`) make the SLO's knee the capacity:
 * below it no request waits, above it the queue grows through the level. The search brackets it
 * within its 5 % precision, every probe is a measured level of the record, N* is read from them by
 * the usual rule, and the usage errors of the search flags. Bun only (end to end): ~25 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const CAPACITY = (1000 * 4) / (8 * 10);

describe("load mode's level search (binary)", { skip: runtime.name === "bun" ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let mock: MockProc;
  let dir = "";
  let env: Record<string, string> = {};
  before(async () => {
    mock = await startMock(["--max-batch", "4", "--step-ms", "10"]);
    dir = await mkdtemp(join(tmpdir(), "ik-auto-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const load = (extra: string[]) =>
    runIk(["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--max-tokens", "8", "--burstiness", "100", "--warmup", "2", "--json", ...extra],
      { env, timeoutMs: 120_000 });
  const measuredOf = async (capacity: Record<string, unknown>) =>
    JSON.parse(await readFile(join(env.IK_RUNS_DIR, (capacity.data as { measurement: string }).measurement, "evidence.json"), "utf8"));

  test("--rates auto brackets the simulator's 50 req/s within 5 %, every probe a level of the record", async () => {
    const r = await load(["--rates", "auto", "--auto-start", "20", "--requests", "80", "--slo-ttft-p95-ms", "60"]);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const cap = JSON.parse(r.stdout);
    const m = await measuredOf(cap);
    const a = m.data.auto_search;
    assert.equal(a.precision, 0.05);
    assert.ok(a.held !== null && a.failed !== null, JSON.stringify(a));
    assert.ok(a.failed - a.held <= 0.05 * a.held + 1e-9, `bracket [${a.held}, ${a.failed})`);
    assert.match(a.stopped, /bracketed within 5\.0 %/);
    assert.ok(a.probes.length <= 9, `${a.probes.length} levels`);
    assert.deepEqual(a.probes.slice(0, 2).map((p: { level: number }) => p.level), [20, 40]);
    // The truth: the SLO holds up to the capacity and fails above it, so N* is within 5 % of it.
    const star = cap.data.rate_star_rps;
    assert.equal(star, a.held);
    assert.ok(Math.abs(star - CAPACITY) <= 0.05 * CAPACITY, `rate* ${star} vs capacity ${CAPACITY}`);
    // Every probe is a measured level; the record's grid is them in level order.
    const levels = m.data.levels.map((l: { level: number }) => l.level);
    assert.deepEqual(levels, a.probes.map((p: { level: number }) => p.level), "levels in the order measured");
    assert.deepEqual(m.identity.workload.rate_rps, [...levels].sort((x: number, y: number) => x - y));
    for (const l of m.data.levels) assert.equal(l.sent, 80, l.name);
    assert.equal(m.request.args.rates, "auto");
    assert.ok(m.limitations.some((l: string) => /^levels chosen by a search \(--rates auto\)/.test(l)), m.limitations.join(" | "));
    assert.ok(!cap.limitations.some((l: string) => /top of the grid|at every level the search measured/.test(l)), cap.limitations.join(" | "));
  });

  test("--concurrency auto from 1 stream: N* is the simulator's 4 slots' worth (capacity × e2e_ref)", async () => {
    const r = await load(["--concurrency", "auto", "--requests", "60", "--slo-ttft-p95-ms", "60", "--max-levels", "8"]);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const cap = JSON.parse(r.stdout);
    const m = await measuredOf(cap);
    const a = m.data.auto_search;
    assert.equal(a.probes[0].level, 1);
    assert.ok(a.probes.every((p: { level: number }) => Number.isInteger(p.level)));
    const expected = CAPACITY * (m.data.e2e_ref_ms / 1000);
    const n = cap.data.n_star;
    assert.ok(n !== null && n >= Math.floor(expected) - 1 && n <= Math.ceil(expected) + 1, `N* ${n} vs capacity x e2e_ref ${expected.toFixed(2)}`);
    assert.equal(a.failed - a.held, 1, "integer levels: bracketed to one stream");
  });

  test("the search's flags: one line, 64, before anything is sent", async () => {
    const cases: [string[], RegExp][] = [
      [["--rates", "auto"], /--rates: auto needs an SLO/],
      [["--rates", "auto,4", "--slo-ttft-p95-ms", "60"], /--rates: auto cannot be mixed with levels/],
      [["--rates", "1,2", "--precision", "0.1"], /--precision: is for a level search/],
      [["--rates", "auto", "--slo-ttft-p95-ms", "60", "--sweep-all"], /--sweep-all: cannot be used with --rates auto/],
      [["--concurrency", "auto", "--slo-ttft-p95-ms", "60", "--closed-loop"], /--concurrency: auto searches for N\*, and --closed-loop never yields one/],
      [["--concurrency", "auto", "--slo-ttft-p95-ms", "60", "--auto-start", "2.5"], /--auto-start: 2\.5 is not a whole number/],
    ];
    for (const [args, re] of cases) {
      const r = await load(args);
      assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr.trim(), re);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
    const single = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rates", "auto"], { env });
    assert.equal(single.code, 64);
    assert.match(single.stderr, /--rates: is for --mode load/);
  });
});
