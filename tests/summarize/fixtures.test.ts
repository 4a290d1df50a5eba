/**
 * The summariser against the generator's independent numbers (scripts/gen_vllm_fixtures.py,
 * numpy): every cell's table values and derived MTP figures, the exact README rows as Python
 * formats them, the per-category tables with MT-bench pooled, and the FLAGS of failed requests in
 * current and legacy files. In-process, < 1 s.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { renderUnit } from "../../lib/summarize/mod.ts";
import { close, expected, goodOptions, summarize, VLLM_DATA } from "./_unit.ts";

const NUMBERS = [
  "completed", "out_tps", "req_s", "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "per_stream", "itl_p50", "e2el_p50_s", "tau", "depth",
  "tau_client", "acc_prop", "cached_share", "mean_in", "mean_out", "client_out", "container_gen", "mtp_n", "failed", "n_prompts",
] as const;

describe("summarize vllm on the generated fixtures", () => {
  for (const unit of ["unit", "failed", "r725"] as const) {
    test(`${unit}: every cell's numbers equal the generator's`, async () => {
      const exp = (await expected())[unit];
      const dir = join(VLLM_DATA, unit);
      const opts = unit === "unit" ? goodOptions(dir) : unit === "r725" ? { container: join(dir, "container.log"), sbDir: join(dir, "sb") } : {};
      const s = await summarize(dir, opts);
      assert.deepEqual(s.runs.map((r) => r.tag).sort(), Object.keys(exp).sort());
      const text = renderUnit(s);
      for (const r of s.runs) {
        const e = exp[r.tag];
        for (const k of NUMBERS) close(r[k] as number | null, e[k], `${r.tag}.${k}`);
        assert.ok(text.includes(e.table_line + "\n"), `${r.tag}: README row\n${e.table_line}\nnot in\n${text}`);
      }
      for (const c of s.categories) {
        const e = exp[c.tag];
        assert.ok(e.categories, `${c.tag} has no expected categories`);
        for (const [which, got, want] of [["by", c.by, e.categories], ["groups", c.groups, e.task_groups]] as const) {
          assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), which);
          for (const [k, b] of Object.entries(got)) {
            for (const f of ["n", "acc", "prop", "gen", "tau", "acc_prop"] as const) close(b[f], want[k][f], `${c.tag} ${which}.${k}.${f}`);
          }
        }
        assert.equal(c.verified, true, c.tag);
      }
      assert.equal(s.categories.length, Object.values(exp).filter((e: any) => e.categories).length);
    });
  }

  test("the good unit: no FLAGS, PUBLISHABLE with the largest A/B spread named", async () => {
    const exp = (await expected()).unit;
    const dir = join(VLLM_DATA, "unit");
    const s = await summarize(dir, goodOptions(dir));
    assert.deepEqual(s.flags, []);
    let max = { s: -1, at: "" };
    for (const ds of ["specbench", "random"]) {
      for (const c of ds === "specbench" ? [1] : [1, 4]) {
        const pre = ds === "specbench" ? "sb" : "rnd";
        const a = exp[`${pre}-c${c}-A`].out_tps, b = exp[`${pre}-c${c}-B`].out_tps;
        const sp = Math.abs(a - b) / ((a + b) / 2) * 100;
        if (sp > max.s) max = { s: sp, at: `${ds} c${c}` };
      }
    }
    assert.equal(s.decision?.verdict, "PUBLISHABLE");
    assert.equal(s.decision?.text, `PUBLISHABLE (max A/B spread ${max.s.toFixed(2)} % at ${max.at}; every cell cached <= 1 %)`);
    // the --append-result file: the last object is used (the decoy before it has half the throughput) and a warning says so
    assert.deepEqual(s.warnings, [`${join(dir, "results", "rnd-c4-B.json")} holds 2 results (--append-result); using the last`]);
    const legacy = s.runs.find((r) => r.tag === "rnd-c1-A")!;
    assert.equal(legacy.result_layout, "legacy");
    assert.equal(legacy.failed, 0);
  });

  test("failed requests inside the arrays: the same FLAGS from a current and a legacy file", async () => {
    const exp = (await expected()).failed;
    const s = await summarize(join(VLLM_DATA, "failed"), { decide: ["A"] });
    const want: string[] = [];
    for (const tag of ["fail-modern", "fail-legacy"]) {
      const e = exp[tag];
      const d = (e.client_out - e.container_gen) / e.container_gen * 100;
      want.push(`${tag}: ${e.failed} failed requests`, `${tag}: ${e.completed} completed of ${e.n_prompts} prompts`,
        `${tag}: client sum(output_lens) ${e.client_out} != container sum(gen) ${e.container_gen} (${d.toFixed(2)} %)`);
    }
    // the two files are the same cell (pass A, random, c2) in two layouts: runs.tsv repeats it
    const runs = join(VLLM_DATA, "failed", "runs.tsv");
    want.push(`fail-legacy: ${runs}:3 repeats cell (pass A, random, c2) of fail-modern (${runs}:2)`);
    assert.deepEqual(s.flags, want);
    // the legacy file has no `failed` key: the count comes from its errors array
    assert.equal(s.runs.find((r) => r.tag === "fail-legacy")!.result_layout, "legacy");
    assert.equal(s.decision?.verdict, "NOT-PUBLISHABLE");
  });

  test("R725 layout: one container log for every cell, the c1 split from --sb-dir", async () => {
    const dir = join(VLLM_DATA, "r725");
    const s = await summarize(dir, { container: join(dir, "container.log"), sbDir: join(dir, "sb"), decide: ["-"] });
    assert.deepEqual(s.flags, ["specbench: no sample manifest for r725-sb-c1, r725-sb-c2 (same-sample check impossible)"]);
    assert.equal(s.categories.length, 1);
    const noDecide = await summarize(dir, { container: join(dir, "container.log"), sbDir: join(dir, "sb") });
    assert.deepEqual(noDecide.flags, []);
    assert.equal(noDecide.decision, null);
  });
});
