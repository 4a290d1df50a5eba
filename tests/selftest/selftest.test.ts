/** `ik selftest`: passes through the compiled binary, and its checks fail when the client is wrong. */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { equal, near } from "../../lib/selftest/checks.ts";
import { nearestRank } from "../../lib/stats/mod.ts";
import { faultChecks } from "../../lib/selftest/fault_checks.ts";
import { personalityChecks, TRUTH } from "../../lib/selftest/personality_checks.ts";
import { makeSender, type Sender } from "../../lib/selftest/send.ts";
import { ikBin, ikSourceArgv, runIk } from "../_helpers/ik.ts";

describe("ik selftest through the binary", () => {
  test("--quick --json: one personality, every check PASS, exit 0", async () => {
    const r = await runIk(["selftest", "--quick", "--json"], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.ok, true);
    assert.equal(out.quick, true);
    const names = out.checks.map((c: { name: string }) => c.name);
    for (const n of ["ttft_ms median", "tpot_ms median", "token_count_method", "n_tokens (exact length honoured)"]) {
      assert.ok(names.includes(n), n);
    }
    assert.ok(out.checks.every((c: { status: string; group: string }) => c.status === "PASS" && c.group === "vllm"));
  });

  test("full run: every personality, every fault kind and the headroom report", async () => {
    const r = await runIk(["selftest", "--json"], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stdout.slice(-3000) + r.stderr);
    const out = JSON.parse(r.stdout);
    const groups = new Set(out.checks.map((c: { group: string }) => c.group));
    for (const p of ["vllm", "sglang", "llamacpp", "trtllm", "openai"]) {
      assert.ok(groups.has(p) && groups.has(`faults/${p}`), p);
    }
    const faults = out.checks.filter((c: { group: string }) => c.group === "faults/vllm").map((c: { name: string }) => c.name.split(":")[0]);
    assert.deepEqual(faults, ["http429", "http500", "http503", "error-event", "truncate", "malformed", "stall", "slow-headers", "reset"]);
    const head = out.checks.filter((c: { group: string }) => c.group === "headroom").map((c: { name: string }) => c.name);
    for (const c of [1, 64, 256]) {
      for (const what of ["events/s parsed", "client CPU per event", "TTFT error p50 / p99"]) assert.ok(head.includes(`c=${c} ${what}`), `c=${c} ${what}`);
    }
  });

  test("the human table shows measured, expected with tolerance, and the verdict", async () => {
    const r = await runIk(["selftest", "--quick"], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /ttft_ms median\s+│\s+[\d.]+ ms\s+│\s+60\.0 -1\.0\/\+12\.0 ms\s+│\s+PASS/);
    assert.match(r.stdout, /^selftest: PASS: \d+ passed, 0 failed/m);
  });
});

describe("selftest checks fail when the client is wrong", () => {
  const deps = (send: Sender) => ({ rt: runtime, send, ikArgv: runtimeIkArgv() });
  const real = makeSender(new AbortController().signal);

  test("a client that measures TTFT from the role chunk or counts events instead of ids is caught", async () => {
    const lying: Sender = async (req) => {
      const row = await real(req);
      return { ...row, ttft_ms: (row.ttft_ms ?? 0) - 20, token_count_method: "sse_events", n_tokens: (row.n_tokens ?? 0) - 1 };
    };
    const checks = await personalityChecks(deps(lying), "vllm");
    const status = (name: string) => checks.find((c) => c.name === name)?.status;
    assert.equal(status("ttft_ms median"), "FAIL");
    assert.equal(status("token_count_method"), "FAIL");
    assert.equal(status("n_tokens (exact length honoured)"), "FAIL");
    assert.equal(status("tpot_ms median"), "PASS", "the untouched number still passes");
  });

  test("a client that calls a timeout a network error is caught", async () => {
    const mislabel: Sender = async (req) => {
      const row = await real(req);
      return row.error_kind === "timeout" ? { ...row, error_kind: "network" } : row;
    };
    const checks = await faultChecks(deps(mislabel), "sglang");
    assert.equal(checks.find((c) => c.name.startsWith("stall"))?.status, "FAIL");
    assert.equal(checks.find((c) => c.name === "reset")?.status, "PASS");
  });

  test("check helpers", () => {
    assert.equal(near("g", "x", 61, 60, { below: 1, above: 12 }).status, "PASS");
    assert.equal(near("g", "x", 58.9, 60, { below: 1, above: 12 }).status, "FAIL");
    assert.equal(near("g", "x", null, 60, { below: 1, above: 12 }).status, "FAIL");
    assert.equal(equal("g", "x", 24, TRUTH.maxTokens).status, "PASS");
    assert.equal(equal("g", "x", undefined, 24).status, "FAIL");
    assert.equal(nearestRank([5, 1, 4, 2, 3], 50), 3);
    assert.equal(nearestRank([1, 2, 3, 4], 50), 2);
    assert.equal(nearestRank([], 50), null);
  });
});

/** The binary when built (fast to start), else cli.ts on this runtime. */
function runtimeIkArgv(): string[] {
  return existsSync(ikBin()) ? [ikBin()] : ikSourceArgv();
}
