/**
 * Mutation acceptance: a binary built with one client fault (`scripts/build.sh --fault NAME`) must
 * fail `ik selftest --quick --json` with exit 1, and the check that fails must be the one for that
 * fault; the correct binary passes. `usage-trusted` only shows where no ids stream, which --quick
 * (vllm alone) never sees, so that variant runs the full `ik selftest --json` (~20 s; its
 * `<personality>/usage-mismatch` rows for sglang, llamacpp, trtllm and openai are the ones that must
 * FAIL; the correct binary's full run passes them in selftest.test.ts). Each variant is deleted
 * after use. Bun only (six builds and seven selftest runs: ~90 s); skipped under Deno for time.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { arch, tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import type { Check } from "../../lib/selftest/checks.ts";
import { ikBin, ROOT, runArgv } from "../_helpers/ik.ts";

/** The personalities that stream no ids to a default client (where only token events refute a usage). */
const NO_IDS = ["sglang", "llamacpp", "trtllm", "openai"];

/**
 * Each fault, and the checks (group, name prefix) that must FAIL for it (every one of `also` too);
 * `full`: run the whole selftest, not --quick.
 */
const VARIANTS: { fault: string; group: string; check: string; also?: string[]; full?: boolean }[] = [
  { fault: "kfirst-ignored", group: "vllm/tpe3", check: "k_first (first event's ids)" },
  { fault: "events-as-ids", group: "vllm/tpe3", check: "n_tokens (ids) = mock's tokens" },
  { fault: "no-count-mismatch", group: "vllm/usage-mismatch", check: "count_mismatch flagged" },
  { fault: "ttft-plus-5ms", group: "vllm", check: "ttft lag vs mock first_ms" },
  { fault: "tpot-plus-5pct", group: "vllm", check: "tpot vs mock clock" },
  {
    fault: "usage-trusted",
    group: "sglang/usage-mismatch",
    check: "usage 0: n_tokens = token events, not usage",
    also: NO_IDS.flatMap((p) => [
      `${p}/usage-mismatch usage -1 (< token events): n_tokens = token events, not usage`,
      `${p}/usage-mismatch usage 0: n_tokens = token events, not usage`,
      `${p}/usage-mismatch count_mismatch flagged where usage < token events`,
    ]),
    full: true,
  },
];

/**
 * Runs a fault build's selftest; a wanted check that came out BUSY (ik starved of CPU: the fault
 * neither caught nor missed) proves nothing, so it runs again, at most three times in all.
 */
async function selftestUntilJudged(bin: string, args: string[], wanted: string[], timeoutMs: number) {
  for (let attempt = 1;; attempt++) {
    const r = await runArgv([bin], args, { timeoutMs });
    const out = JSON.parse(r.stdout) as { checks: Check[] };
    const busy = out.checks.some((c) => c.status === "BUSY" && wanted.some((w) => `${c.group} ${c.name}`.startsWith(w)));
    if (!busy || attempt === 3) return { r, out };
  }
}

const skip = runtime.name === "deno" ? "six builds and seven selftests: Bun only, for time" : false;

describe("selftest catches every client fault variant", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-mutation-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const v of VARIANTS) {
    test(`--fault ${v.fault}: exit 1, '${v.group} ${v.check}' FAILs${v.full ? " (full selftest)" : ""}`, async () => {
      const bin = join(dir, `ik-${v.fault}`);
      const b = spawnSync("bash", ["scripts/build.sh", "--fault", v.fault, "--outfile", bin], {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 120_000,
      });
      assert.equal(b.status, 0, `build.sh --fault ${v.fault}: ${b.stderr}`);
      try {
        const args = v.full ? ["selftest", "--json"] : ["selftest", "--quick", "--json"];
        const wanted = [`${v.group} ${v.check}`, ...(v.also ?? [])];
        const { r, out } = await selftestUntilJudged(bin, args, wanted, v.full ? 120_000 : 60_000);
        const failed = out.checks.filter((c) => c.status === "FAIL").map((c) => `${c.group} ${c.name}`);
        const busy = out.checks.filter((c) => c.status === "BUSY").map((c) => `${c.group} ${c.name}`);
        for (const w of wanted) {
          assert.ok(
            failed.some((n) => n.startsWith(w)),
            `${w} should FAIL; failed: ${failed.join("; ")}; busy: ${busy.join("; ")}`,
          );
        }
        assert.equal(r.code, 1, r.stderr);
      } finally {
        rmSync(bin, { force: true });
      }
    });
  }

  test("the correct binary passes --quick", async () => {
    assert.ok(existsSync(ikBin()), `build ${ikBin()} first (npm run build, or IK_BIN)`);
    const r = await runArgv([ikBin()], ["selftest", "--quick", "--json"], { timeoutMs: 60_000 });
    const out = JSON.parse(r.stdout) as { verdict: string; checks: Check[] };
    const failed = out.checks.filter((c) => c.status === "FAIL").map((c) =>
      `${c.group} ${c.name}: ${c.measured}`
    );
    assert.deepEqual(failed, []);
    assert.ok(r.code === 0 || (r.code === 69 && out.verdict === "BUSY"), `exit ${r.code}`);
  });
});

/** Whether release.ts has cached the Node the Node build embeds (it has once dist/ik-node was built). */
function nodeCached(): boolean {
  try {
    return readdirSync(join(ROOT, ".bun-cache", "ik-release")).some((n) => n.startsWith(`node-linux-${arch()}@`));
  } catch {
    return false;
  }
}

describe("the Node build: one tolerance tells a +5 ms client from a correct one", {
  skip: skip || (!nodeCached() && "no cached Node (bun scripts/release.ts --host-node-only caches it)"),
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-mutation-node-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  test("Node build --fault ttft-plus-5ms: exit 1, 'vllm ttft lag vs mock first_ms' FAILs", async () => {
    const bin = join(dir, "ik-node-ttft-plus-5ms");
    const b = spawnSync(join(ROOT, "node_modules", ".bin", "bun"), [
      "scripts/release.ts",
      "--host-node-only",
      "--fault",
      "ttft-plus-5ms",
      "--outfile",
      bin,
    ], { cwd: ROOT, encoding: "utf8", timeout: 180_000 });
    assert.equal(b.status, 0, `release.ts --fault: ${b.stderr}`);
    const { r, out } = await selftestUntilJudged(bin, ["selftest", "--quick", "--json"], ["vllm ttft lag vs mock first_ms"], 90_000);
    const failed = out.checks.filter((c) => c.status === "FAIL").map((c) => `${c.group} ${c.name}`);
    assert.ok(failed.some((n) => n.startsWith("vllm ttft lag vs mock first_ms")), `failed: ${failed.join("; ")}`);
    assert.equal(r.code, 1, r.stderr);
  });
});
