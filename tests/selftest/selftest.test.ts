/**
 * `ik selftest`: passes through the compiled binary, its checks fail when the client is wrong
 * (in-process lying senders, one per class of client fault), and an interrupt is no verdict.
 * A verdict of BUSY (exit 69) is the host being too busy to judge timing: accepted where a pass
 * is expected only when no check FAILed. Budget: ~45 s under Bun (full run ~20 s); under Deno the
 * in-process checks only (the binary's runs are the same whichever runner starts them).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { type Check } from "../../lib/selftest/checks.ts";
import { faultChecks } from "../../lib/selftest/fault_checks.ts";
import { mismatchChecks } from "../../lib/selftest/mismatch_checks.ts";
import { tokensPerEventChecks } from "../../lib/selftest/packed_checks.ts";
import { personalityChecks } from "../../lib/selftest/personality_checks.ts";
import { makeSender, type Sender } from "../../lib/selftest/send.ts";
import { ikBin, ikSourceArgv, ROOT, runIk } from "../_helpers/ik.ts";

type Out = { ok: boolean; verdict: string; quick: boolean; checks: Check[] };

/** Exit 0 with every check PASS/INFO, or 69 (inconclusive) with no FAIL and at least one BUSY. */
function assertPassOrBusy(code: number | null, out: Out, context: string): void {
  const fails = out.checks.filter((c) => c.status === "FAIL").map((c) => `${c.group} ${c.name}: ${c.measured} vs ${c.expected}`);
  // The failing checks first: a CI log keeps only the start of a long message.
  const why = `exit ${code}; FAIL: ${fails.join(" | ") || "none"}\n${context}`;
  assert.deepEqual(fails, [], why);
  if (code === 69) assert.equal(out.verdict, "BUSY", why);
  else assert.equal(code, 0, why);
}

// The compiled binary's own selftest runs the same under either test runner (and `.ci/run` runs it
// once more by itself): end to end and ~45 s, so under Bun only (CONTRACTS.md "CI time").
describe("ik selftest through the binary", { skip: runtime.name === "bun" ? false : "Bun only (end to end through dist/ik; CONTRACTS.md CI time)" }, () => {
  test("--quick --json: vllm with packed events, spec, a lying usage and the timing checks; numbers as numbers", async () => {
    const t0 = performance.now();
    const r = await runIk(["selftest", "--quick", "--json"], { timeoutMs: 60_000 });
    const out = JSON.parse(r.stdout) as Out;
    assertPassOrBusy(r.code, out, r.stdout + r.stderr);
    assert.ok(performance.now() - t0 < 15_000, "quick stays near its 10 s budget");
    assert.equal(out.quick, true);
    const groups = new Set(out.checks.map((c) => c.group));
    assert.deepEqual([...groups], ["vllm", "vllm/tpe3", "vllm/spec", "vllm/usage-mismatch"]);
    const names = out.checks.map((c) => `${c.group} ${c.name}`);
    for (
      const n of [
        "vllm ttft lag vs mock first_ms",
        "vllm tpot vs mock clock",
        "vllm token_count_method",
        "vllm n_tokens (exact length honoured)",
        "vllm/tpe3 k_first (first event's ids)",
        "vllm/tpe3 n_tokens (ids) = mock's tokens",
        "vllm/tpe3 n_token_events",
        "vllm/tpe3 tpot vs mock clock",
        "vllm/spec n_token_events",
        "vllm/usage-mismatch count_mismatch flagged",
      ]
    ) assert.ok(names.some((x) => x.startsWith(n)), n);
    for (const c of out.checks) {
      assert.ok(c.value === null || typeof c.value === "number", `${c.name}: value`);
      assert.ok(c.unit === null || typeof c.unit === "string", `${c.name}: unit`);
    }
    const lag = out.checks.find((c) => c.group === "vllm" && c.name.startsWith("ttft lag"))!;
    assert.equal(typeof lag.value, "number");
    assert.deepEqual([lag.unit, lag.expected_value, lag.tolerance], ["ms", 0, { below: 0.5, above: 4 }]);
  });

  test("full run: every personality with packed events, every fault kind, the headroom report", async () => {
    const r = await runIk(["selftest", "--json"], { timeoutMs: 120_000 });
    const out = JSON.parse(r.stdout) as Out;
    assertPassOrBusy(r.code, out, r.stdout.slice(-3000) + r.stderr);
    const groups = new Set(out.checks.map((c) => c.group));
    for (const p of ["vllm", "sglang", "llamacpp", "trtllm", "openai"]) {
      assert.ok(groups.has(p) && groups.has(`faults/${p}`) && groups.has(`${p}/tpe3`), p);
    }
    assert.ok(groups.has("vllm/spec") && groups.has("sglang/spec") && groups.has("vllm/usage-mismatch"));
    // A lying usage where no ids stream: high (trusted), below the token events and 0 (not trusted).
    for (const p of ["sglang", "llamacpp", "trtllm", "openai"]) {
      const lie = out.checks.filter((c) => c.group === `${p}/usage-mismatch`).map((c) => c.name);
      for (
        const n of [
          "n_usage = the lie told (+3; -1; floored at 0)",
          "usage +3 (no event refutes it): n_tokens = usage",
          "usage -1 (< token events): n_tokens = token events, not usage",
          "usage 0: n_tokens = token events, not usage",
          "count_mismatch flagged where usage < token events",
        ]
      ) assert.ok(lie.includes(n), `${p}/usage-mismatch ${n}: ${lie.join(", ")}`);
    }
    const single = out.checks.filter((c) => c.group === "bench serve single").map((c) => c.name);
    for (const n of ["record complete, requests ok", "artifacts verify (sha256)", "record: median TTFT (all)", "record: median TPOT (all)"]) {
      assert.ok(single.includes(n), `bench serve single: ${n}`);
    }
    const load = out.checks.filter((c) => c.group === "bench serve load").map((c) => c.name);
    assert.ok(load.includes("records written and verified") && load.some((n) => n.startsWith("max rate found")), load.join(", "));
    const assumed = out.checks.find((c) => c.group === "sglang/tpe3" && c.name === "k_first_assumed");
    assert.equal(assumed?.measured, "true");
    const faults = out.checks.filter((c) => c.group === "faults/vllm").map((c) => c.name.split(":")[0]);
    assert.deepEqual(faults, [
      "http429",
      "http500",
      "http503",
      "error-event",
      "truncate",
      "malformed",
      "stall",
      "slow-headers",
      "reset",
    ]);
    const head = out.checks.filter((c) => c.group === "headroom");
    for (const c of [1, 64, 256]) {
      for (const what of ["events/s parsed", "client CPU per event", "client lag p50", "client lag p99"]) {
        assert.ok(head.some((h) => h.name === `c=${c} ${what}`), `c=${c} ${what}`);
      }
    }
    const p99 = head.find((h) => h.name === "c=64 client lag p99")!;
    assert.notEqual(p99.status, "INFO", "the 64-stream lag is judged");
    assert.equal(head.find((h) => h.name === "c=256 client lag p99")?.status, "INFO");
  });

  test("by default a line per group and only the rows to look at; --verbose shows every row with its tolerance", async () => {
    const r = await runIk(["selftest", "--quick"], { timeoutMs: 90_000 });
    assert.ok(r.code === 0 || r.code === 69, r.stdout + r.stderr);
    assert.match(r.stdout, /^ {2}vllm\s+\d+ passed/m);
    assert.match(r.stdout, /^ {2}vllm\/tpe3\s+\d+ passed/m);
    // A BUSY row (a busy host) is shown; a PASS row is not.
    assert.doesNotMatch(r.stdout, /│\s+PASS\s+│/);
    assert.match(r.stdout, /^selftest: (PASS|INCONCLUSIVE): \d+ passed, 0 failed/m);
    const v = await runIk(["selftest", "--quick", "--verbose"], { timeoutMs: 90_000 });
    assert.ok(v.code === 0 || v.code === 69, v.stdout + v.stderr);
    assert.match(
      v.stdout,
      /ttft lag vs mock first_ms \(median, n=9\)\s+│\s+[\d.]+ ms\s+│\s+0\.00 -0\.50\/\+4\.00 ms\s+│\s+(PASS|BUSY)/,
    );
    assert.match(v.stdout, /^selftest: (PASS|INCONCLUSIVE): \d+ passed, 0 failed/m);
  });

  test("a temp folder that cannot be written is exit 74 naming it, before any check (not a FAIL of ik's measurements)", async () => {
    const r = await runIk(["selftest", "--quick"], { env: { TMPDIR: "/proc/ik-selftest-no-tmp" }, timeoutMs: 30_000 });
    assert.equal(r.code, 74, r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /^ik: \/proc\/ik-selftest-no-tmp: cannot write .*the temp folder.*; set TMPDIR to a writable folder/);
    assert.doesNotMatch(r.stdout + r.stderr, /FAIL/);
  });

  test("SIGINT: exit 130, 'interrupted' on stderr, no verdict line, and no mock left behind", async () => {
    const argv = existsSync(ikBin()) ? [ikBin()] : ikSourceArgv();
    let pid = 0;
    const r = await new Promise<
      { code: number | null; signal: string | null; stdout: string; stderr: string }
    >((ok) => {
      const child = spawn(argv[0], [...argv.slice(1), "selftest"], {
        cwd: ROOT,
        env: { ...runtime.envAll(), NO_COLOR: "1" },
      });
      pid = child.pid ?? 0;
      let stdout = "", stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => {
        stderr += d;
        if (stderr.includes("personalities")) setTimeout(() => child.kill("SIGINT"), 800);
      });
      const t = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.on("close", (code, signal) => (clearTimeout(t), ok({ code, signal, stdout, stderr })));
    });
    // Deno's node:child_process reports an exit status of 130 (128 + SIGINT) as signal SIGINT.
    if (runtime.name === "deno" && r.code === null) assert.equal(r.signal, "SIGINT", r.stderr);
    else assert.equal(r.code, 130, r.stderr);
    assert.match(r.stderr, /selftest: interrupted/);
    assert.doesNotMatch(r.stdout + r.stderr, /selftest: (PASS|FAIL)/);
    // Every mock was told --parent-pid <selftest>; none may outlive it (stop, or the watchdog).
    await new Promise((w) => setTimeout(w, 1500));
    const ps = spawnSync("ps", ["-eo", "args"], { encoding: "utf8" });
    if (ps.status === 0) {
      assert.ok(!ps.stdout.includes(`--parent-pid ${pid} `), "a mock outlived the interrupted selftest");
    }
  });
});

describe("selftest checks fail when the client is wrong", () => {
  const argv = existsSync(ikBin()) ? [ikBin()] : ikSourceArgv();
  const deps = (send: Sender) => ({ rt: runtime, send, ikArgv: argv });
  const real = makeSender(new AbortController().signal);
  const st = (checks: Check[], prefix: string) => checks.find((c) => c.name.startsWith(prefix))?.status;
  /** FAIL, or BUSY when the host was too busy to judge (then the run proves nothing either way). */
  const failsOrBusy = (s: string | undefined, what: string) =>
    assert.ok(s === "FAIL" || s === "BUSY", `${what}: ${s}`);

  test("a wrong k_first (1 though the first event carried 3 ids) is caught, with its TPOT", async () => {
    const lying: Sender = async (req) => {
      const row = await real(req);
      const k = row.k_first ?? 1;
      const tpot = row.tpot_ms === null || row.n_tokens === null
        ? null
        : row.tpot_ms * (row.n_tokens - k) / (row.n_tokens - 1);
      return { ...row, k_first: 1, tpot_ms: tpot };
    };
    const checks = await tokensPerEventChecks(deps(lying), "vllm");
    assert.equal(st(checks, "k_first (first event's ids)"), "FAIL");
    failsOrBusy(st(checks, "tpot vs mock clock"), "tpot");
    assert.equal(st(checks, "n_tokens (ids)"), "PASS", "the untouched count still passes");
  });

  test("a wrong count method (events counted as ids, or ids called usage) is caught", async () => {
    const events: Sender = async (req) => {
      const row = await real(req);
      return { ...row, n_tokens: row.n_token_events };
    };
    assert.equal(
      st(await tokensPerEventChecks(deps(events), "vllm"), "n_tokens (ids) = mock's tokens"),
      "FAIL",
    );
    const label: Sender = async (req) => ({ ...await real(req), token_count_method: "usage" });
    assert.equal(st(await personalityChecks(deps(label), "vllm"), "token_count_method"), "FAIL");
  });

  test("a missing mismatch flag, and a count taken from a lying usage, are caught", async () => {
    const quiet: Sender = async (req) => ({ ...await real(req), count_mismatch: null });
    assert.equal(st(await mismatchChecks(deps(quiet), "vllm"), "count_mismatch flagged"), "FAIL");
    const trusting: Sender = async (req) => {
      const row = await real(req);
      return { ...row, n_tokens: row.n_usage, token_count_method: "usage" };
    };
    assert.equal(st(await mismatchChecks(deps(trusting), "vllm"), "n_tokens = streamed ids"), "FAIL");
  });

  test("no ids: a count taken from a usage below the token events (or 0) is caught; so is ignoring a plausible one", async () => {
    // Every usage believed, as the usage-trusted fault build does.
    const trusting: Sender = async (req) => {
      const row = await real(req);
      if (row.n_usage === null) return row;
      return { ...row, n_tokens: row.n_usage, token_count_method: "usage", count_mismatch: null };
    };
    const t = await mismatchChecks(deps(trusting), "openai");
    assert.equal(st(t, "usage -1 (< token events)"), "FAIL");
    assert.equal(st(t, "usage 0:"), "FAIL");
    assert.equal(st(t, "count_mismatch flagged where usage < token events"), "FAIL");
    assert.equal(st(t, "usage +3"), "PASS", "the lie no event refutes is the count either way");
    assert.equal(st(t, "n_usage = the lie told"), "PASS");
    // Token events counted whatever the usage says: the plausible (high) usage is then wrongly ignored.
    const events: Sender = async (req) => {
      const row = await real(req);
      return { ...row, n_tokens: row.n_token_events, token_count_method: "sse_events" };
    };
    const e = await mismatchChecks(deps(events), "llamacpp");
    assert.equal(st(e, "usage +3"), "FAIL");
    assert.equal(st(e, "usage 0:"), "PASS");
  });

  test("a row that hides the k_first = 1 assumption is caught where only usage comes", async () => {
    const hiding: Sender = async (req) => ({ ...await real(req), k_first_assumed: false });
    assert.equal(st(await tokensPerEventChecks(deps(hiding), "sglang"), "k_first_assumed"), "FAIL");
  });

  test("a 5 ms TTFT bias fails the lag check; the TPOT checks still pass", async () => {
    const late: Sender = async (req) => {
      const row = await real(req);
      return { ...row, ttft_ms: row.ttft_ms === null ? null : row.ttft_ms + 5 };
    };
    const checks = await personalityChecks(deps(late), "vllm");
    failsOrBusy(st(checks, "ttft lag vs mock first_ms"), "ttft lag");
    assert.notEqual(st(checks, "tpot vs mock clock"), "FAIL");
  });

  test("a 5 % TPOT bias fails against the mock clock; the TTFT checks still pass", async () => {
    const slow: Sender = async (req) => {
      const row = await real(req);
      return { ...row, tpot_ms: row.tpot_ms === null ? null : row.tpot_ms * 1.05 };
    };
    const checks = await tokensPerEventChecks(deps(slow), "sglang");
    failsOrBusy(st(checks, "tpot vs mock clock"), "tpot");
    assert.notEqual(st(checks, "ttft lag vs mock first_ms"), "FAIL");
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

  test("only the stall and slow-headers faults run with the short silence limit", async () => {
    // A host busy booting the other personalities' mocks (the Node build) once turned a 429 into
    // a timeout at 0.4 s: the faults whose answer comes at once keep the client's default limit.
    const limits = new Map<string, number | undefined>();
    const recording: Sender = async (req) => {
      limits.set(req.prompt.replace(/^fault /, "").replace(/:.*/, ""), req.idleTimeoutS);
      return await real(req);
    };
    const checks = await faultChecks(deps(recording), "vllm");
    assert.equal(checks.filter((c) => c.status === "FAIL").length, 0);
    assert.equal(limits.size, 9);
    for (const [fault, s] of limits) {
      if (fault === "stall" || fault === "slow-headers") assert.ok(s !== undefined && s < 1.2, `${fault}: ${s}`);
      else assert.equal(s, undefined, fault);
    }
  });
});
