/**
 * A server that dies during a load level, through dist/ik: the level is not judged ("server
 * unreachable": its refused requests are no SLO failure), the sweep stops there, N* is a lower bound
 * from the levels before it (or none), the records are kept and marked incomplete with the reason
 * first, and ik exits 69 with one line. Bun only (end to end, ~10 s).
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { ikBin, startArgv } from "../_helpers/ik.ts";
import { startMock } from "../mock/_helpers.ts";

const skip = runtime.name === "bun" ? false : "end to end through dist/ik: Bun only (CONTRACTS.md CI time)";

describe("bench serve --mode load: the server dies mid-level", { skip }, () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-gone-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** A mock that exits by itself (`--exit-after-s`: a crash, mid-level on the 3 s levels' timetable), and the run against it. */
  async function runAgainstDying(rates: string, exitAfterS: number, sub: string) {
    const mock = await startMock(["--engine", "vllm", "--ttft-ms", "20", "--tpot-ms", "2", "--exit-after-s", String(exitAfterS)]);
    const p = startArgv([ikBin()], [
      "bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--max-tokens", "4", "--json",
      "--rates", rates, "--duration-s", "3", "--warmup", "0", "--slo-ttft-p95-ms", "2000", "--sweep-all",
    ], { env: { IK_RUNS_DIR: join(dir, sub), IK_KEY_FILE: join(dir, "key") } });
    try {
      const st = await p.exited;
      return { code: st.code, stdout: p.stdout(), stderr: p.stderr(), root: join(dir, sub) };
    } finally {
      await p.stop("SIGKILL").catch(() => {});
      await mock.stop().catch(() => {});
    }
  }

  test("killed during the second level: that level not judged, N* >= the level below, no level after it, exit 69", async () => {
    const r = await runAgainstDying("4,8,16", 4.5, "a");
    assert.equal(r.code, 69, r.stderr);
    const lines = r.stderr.trim().split("\n").filter((l) => l.startsWith("ik: "));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^ik: --base-url: the server stopped answering during level r8: \d+ of \d+ request\(s\) failed on the network, and GET \/v1\/models after the level could not connect/);
    assert.match(lines[0], /the records serve_benchmark-\S+ and capacity-\S+ keep what was measured/);
    const cap = JSON.parse(r.stdout);
    assert.equal(cap.complete, false);
    assert.equal(cap.data.rate_star_rps, 4);
    assert.equal(cap.data.n_star_lower_bound, true);
    assert.match(cap.data.reason, /level 8 was not judged \(server unreachable\): N\* is at least 4/);
    const curve = cap.data.curve as { name: string; slo_ok: boolean | null; not_judged: string | null }[];
    assert.deepEqual(curve.map((c) => c.name), ["r4", "r8"], "r16 was not run against a dead server, --sweep-all or not");
    assert.equal(curve[1].not_judged, "server unreachable");
    assert.equal(curve[1].slo_ok, null);
    const measured = JSON.parse(await readFile(join(r.root, cap.data.measurement, "evidence.json"), "utf8"));
    assert.equal(measured.complete, false);
    assert.match(measured.limitations[0], /^STOPPED EARLY: the server stopped answering during level r8/);
    assert.match(measured.summary, /STOPPED EARLY/);
    assert.ok(cap.limitations.includes("the run stopped early (the measured record says why): the curve stops early"), cap.limitations.join("\n"));
    assert.ok(!cap.limitations.some((l: string) => /interrupted/.test(l)), "a server gone is no interrupt");
  });

  test("killed during the first level: no N*, no 'SLO fails' claim, exit 69", async () => {
    const r = await runAgainstDying("4,8", 1.5, "b");
    assert.equal(r.code, 69, r.stderr);
    const cap = JSON.parse(r.stdout);
    assert.equal(cap.data.rate_star_rps, null);
    assert.doesNotMatch(cap.summary, /SLO first fails/);
    assert.match(cap.data.reason, /level 4 was not judged \(server unreachable\)/);
  });
});
