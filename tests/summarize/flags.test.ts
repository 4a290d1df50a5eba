/**
 * Every FLAGS rule of the summariser, one break of the good unit each (a scratch copy of
 * tests/testdata/vllm/unit), and the decision's precedence: VOID > NOT-PUBLISHABLE > PUBLISHABLE.
 * The unbroken unit has no FLAGS (fixtures.test.ts), so each line here is caused by its break.
 * In-process, ~1 s.
 */
import assert from "node:assert/strict";
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, describe, test } from "node:test";
import type { UnitOptions } from "../../lib/summarize/mod.ts";
import { goodOptions, scratchUnit, summarize } from "./_unit.ts";

let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await rm(dirname(d), { recursive: true, force: true });
  dirs = [];
});

async function broken(edit: (dir: string) => Promise<void>, over: Partial<UnitOptions> = {}) {
  const dir = await scratchUnit();
  dirs.push(dir);
  await edit(dir);
  return await summarize(dir, { ...goodOptions(dir), ...over });
}

async function rewrite(path: string, f: (text: string) => string): Promise<void> {
  await writeFile(path, f(await readFile(path, "utf8")));
}

async function editJson(dir: string, tag: string, f: (o: Record<string, any>) => void): Promise<void> {
  const p = join(dir, "results", `${tag}.json`);
  const o = JSON.parse(await readFile(p, "utf8"));
  f(o);
  await writeFile(p, JSON.stringify(o));
}

const editTsvCell = (text: string, tag: string, col: string, value: string) => {
  const lines = text.split("\n");
  const cols = lines[0].split("\t");
  return lines.map((l) => {
    const f = l.split("\t");
    if (f[0] === tag) f[cols.indexOf(col)] = value;
    return f.join("\t");
  }).join("\n");
};

describe("FLAGS rules", () => {
  test("no result JSON: the cell reads '(no result; rc …)', and --decide says the pass is incomplete", async () => {
    const s = await broken((d) => rm(join(d, "results", "rnd-c4-B.json")));
    assert.ok(s.flags.some((f) => /^rnd-c4-B: no result JSON \(.*rnd-c4-B\.json: no such file\); rc 0$/.test(f)), s.flags.join("\n"));
    assert.match(s.decision!.text, /^NOT-PUBLISHABLE pass B incomplete \(random c4\); rnd-c4-B: no result JSON/);
  });

  test("a result file that is not JSON names its line", async () => {
    const s = await broken((d) => writeFile(join(d, "results", "sb-c1-A.json"), '{"duration": 1,\n "completed": }'));
    assert.ok(s.flags.some((f) => /^sb-c1-A: no result JSON \(.*sb-c1-A\.json: line 1: not valid JSON/.test(f)), s.flags.join("\n"));
  });

  test("client rc != 0", async () => {
    const s = await broken((d) => rewrite(join(d, "runs.tsv"), (t) => editTsvCell(t, "rnd-c1-B", "rc", "1")));
    assert.deepEqual(s.flags, ["rnd-c1-B: client rc 1"]);
  });

  test("completed != num_prompts", async () => {
    const s = await broken((d) => editJson(d, "sb-c1-B", (o) => (o.num_prompts = 9)));
    assert.deepEqual(s.flags, ["sb-c1-B: 8 completed of 9 prompts"]);
  });

  test("container line count: a line missing, or foreign traffic in the cell's serials", async () => {
    const log = (d: string) => join(d, "logs", "rnd-c1-A.log");
    const missing = await broken((d) => rewrite(log(d), (t) => t.split("\n").filter((l) => !/serial=14 /.test(l)).join("\n")));
    assert.ok(missing.flags.includes("rnd-c1-A: 8 container lines in serials (9,18] vs 8+0 requests + 1 warm-ups (foreign traffic, or lines missing)"), missing.flags.join("\n"));
    const foreign = await broken((d) => rewrite(log(d), (t) => t + "x ik-request serial=18 prompt=3 cached=0 gen=0 acc=0 prop=0\n"));
    assert.ok(foreign.flags.includes("rnd-c1-A: 10 container lines in serials (9,18] vs 8+0 requests + 1 warm-ups (foreign traffic, or lines missing)"), foreign.flags.join("\n"));
  });

  test("client sum(output_lens) != container sum(gen)", async () => {
    const s = await broken((d) => rewrite(join(d, "logs", "rnd-c4-A.log"), (t) => t.replace(/(serial=2[0-9] prompt=\d+ cached=0 gen=)(\d+)/, (_m, a, g) => `${a}${Number(g) + 3}`)));
    const f = s.flags.find((x) => x.startsWith("rnd-c4-A: client sum(output_lens)"));
    assert.ok(f, s.flags.join("\n"));
    const [, client, gen, pct] = /(\d+) != container sum\(gen\) (\d+) \(([-+]\d+\.\d\d) %\)$/.exec(f)!;
    assert.equal(Number(gen) - Number(client), 3);
    assert.equal(pct, ((Number(client) - Number(gen)) / Number(gen) * 100).toFixed(2));
  });

  test("no container log: the line names the path looked for, and the unit cannot be PUBLISHABLE", async () => {
    const s = await broken((d) => rm(join(d, "logs", "sb-c1-B.log")));
    const f = s.integrity.filter((x) => x.startsWith("sb-c1-B:"));
    assert.equal(f.length, 1, f.join("\n"));
    // without the log the c1 category mapping has no lines to map
    assert.deepEqual(s.mappingFlags, ["sb-c1-B: category mapping UNVERIFIED (0 lines vs 8 prompts; prompt-token sequence n/a)"]);
    assert.match(f[0], /^sb-c1-B: no container log found \(looked for .*logs\/sb-c1-B\.log\)/);
    assert.equal(s.decision!.verdict, "NOT-PUBLISHABLE");
    assert.equal(s.runs.find((r) => r.tag === "sb-c1-B")!.tau, null);
    const none = await broken((d) => rewrite(join(d, "runs.tsv"), (t) => editTsvCell(t, "sb-c1-A", "container", "-")));
    assert.ok(none.flags.some((x) => /^sb-c1-A: no container log found \(runs\.tsv names none for this cell and --container was not given\)/.test(x)), none.flags.join("\n"));
  });

  test("--container is the fallback for cells whose row names no log", async () => {
    const s = await broken((d) => rewrite(join(d, "runs.tsv"), (t) => editTsvCell(t, "sb-c1-A", "container", "-")), {});
    assert.ok(s.flags.length);
    const dir = dirs[0];
    const fixed = await summarize(dir, { ...goodOptions(dir), container: join(dir, "logs", "sb-c1-A.log") });
    assert.deepEqual(fixed.flags, []);
  });

  test("an unreadable ik-request line names the log and line", async () => {
    const s = await broken((d) => rewrite(join(d, "logs", "rnd-c1-B.log"), (t) => t + "ik-request serial=zz prompt=1 gen=1\n"));
    assert.ok(s.flags.some((f) => /logs\/rnd-c1-B\.log: 1 unreadable ik-request line\(s\) \(first: line \d+, serial=zz is not a non-negative integer\)$/.test(f)), s.flags.join("\n"));
  });

  test("a value that cannot be a measurement is a FLAG and the unit is never PUBLISHABLE (NaN, Infinity, a fraction of a count)", async () => {
    const cases: [string, (o: Record<string, any>) => void, RegExp][] = [
      ["NaN throughput (as Python writes it)", (o) => (o.output_throughput = "__NAN__"), /^rnd-c1-A: output_throughput is NaN, not a finite non-negative number$/],
      ["Infinity TTFT (as Python writes it)", (o) => (o.median_ttft_ms = "__INF__"), /^rnd-c1-A: median_ttft_ms is Infinity, not a finite non-negative number$/],
      ["a negative count", (o) => (o.completed = -40), /^rnd-c1-A: completed is -40, not a count$/],
      ["a fraction of a count", (o) => (o.total_output_tokens = 39.5), /^rnd-c1-A: total_output_tokens is 39\.5, not a count$/],
      ["a negative latency", (o) => (o.p99_tpot_ms = -1), /^rnd-c1-A: p99_tpot_ms is -1, not a finite non-negative number$/],
    ];
    for (const [name, edit, want] of cases) {
      const s = await broken(async (d) => {
        await editJson(d, "rnd-c1-A", edit);
        await rewrite(join(d, "results", "rnd-c1-A.json"), (t) => t.replace('"__INF__"', "Infinity").replace('"__NAN__"', "NaN"));
      }, { decide: ["A", "B"] });
      assert.ok(s.flags.some((f) => want.test(f)), `${name}: ${s.flags.join("\n")}`);
      assert.doesNotMatch(s.decision!.text, /^PUBLISHABLE/, name);
    }
  });

  test("--metadata strings under a measurement's name are the user's: no FLAG, read as absent, the unit stays PUBLISHABLE", async () => {
    const s = await broken((d) => editJson(d, "rnd-c1-A", (o) => {
      // vLLM without a tokenizer omits the ttft/tpot/itl blocks, so a --metadata p99_ttft_ms survives
      for (const k of Object.keys(o)) if (/_(ttft|tpot|itl)_ms$/.test(k)) delete o[k];
      Object.assign(o, { input_throughput: "n/a", p99_ttft_ms: "under 200", median_tpot_ms: "NaN" });
    }), { decide: ["A", "B"] });
    assert.deepEqual(s.flags, []);
    assert.match(s.decision!.text, /^PUBLISHABLE/);
    const cell = s.runs.find((r) => r.tag === "rnd-c1-A")!;
    assert.equal(cell.ttft_p99, null);
    assert.equal(cell.tpot_p50, null);
    assert.ok(cell.out_tps! > 0);
  });

  test("a container line no engine can write (more accepted than proposed, more cached than sent) is unreadable", async () => {
    const s = await broken((d) => rewrite(join(d, "logs", "rnd-c1-B.log"), (t) => t + "ik-request serial=999999 prompt=5 cached=0 gen=8 acc=700 prop=100\n"));
    assert.ok(s.flags.some((f) => /1 unreadable ik-request line\(s\) \(first: line \d+, acc=700 > prop=100/.test(f)), s.flags.join("\n"));
    assert.doesNotMatch(s.decision?.text ?? "", /^PUBLISHABLE/);
  });

  test("a Spec-Bench output length != --sb-out", async () => {
    const s = await broken(async () => {}, { sbOut: 17 });
    assert.deepEqual(s.flags, [
      "sb-c1-A: 8/8 outputs != 17 tokens (length forcing did not hold; e.g. 16, 16, 16, 16, 16)",
      "sb-c1-B: 8/8 outputs != 17 tokens (length forcing did not hold; e.g. 16, 16, 16, 16, 16)",
    ]);
  });

  test("a Spec-Bench cell without per-request arrays cannot be length-checked", async () => {
    const s = await broken((d) => editJson(d, "sb-c1-A", (o) => (delete o.output_lens, delete o.ttfts)));
    assert.ok(s.flags.includes("sb-c1-A: no per-request arrays (saved without --save-detailed): the 16-token output length cannot be checked"), s.flags.join("\n"));
  });

  test("cached share above --cache-max", async () => {
    const s = await broken((d) => rewrite(join(d, "logs", "rnd-c1-B.log"), (t) => t.replace(/(serial=38 prompt=(\d+) cached=)0/, (_m, a, p) => `${a}${p}`)));
    assert.equal(s.cacheBad.length, 1);
    assert.match(s.cacheBad[0], /^rnd-c1-B: cached (\d+\.\d\d) % of prompt tokens \(1 requests\) > 1\.00 %$/);
    const r = s.runs.find((x) => x.tag === "rnd-c1-B")!;
    assert.equal(s.cacheBad[0].split(" ")[2], (r.cached_share! * 100).toFixed(2));
    assert.match(s.decision!.text, /^NOT-PUBLISHABLE rnd-c1-B: cached/);
    const loose = await summarize(dirs[0], { ...goodOptions(dirs[0]), cacheMax: 0.5 });
    assert.deepEqual(loose.flags, []);
  });

  test("the sample differs between cells of a dataset", async () => {
    const s = await broken((d) => rewrite(join(d, "results", "rnd-c4-A.samples.tsv"), (t) => t.replace(/\n0\t[0-9a-f]{16}\t/, "\n0\tffffffffffffffff\t")));
    assert.deepEqual(s.flags, ["rnd-c4-A: sample differs from rnd-c1-A (8 vs 8 requests, 7 prompts shared)"]);
  });

  test("--decide: a cell without a sample manifest", async () => {
    const s = await broken((d) => rm(join(d, "results", "rnd-c4-B.samples.tsv")));
    assert.deepEqual(s.flags, ["random: no sample manifest for rnd-c4-B (same-sample check impossible)"]);
    const noDecide = await summarize(dirs[0], { ...goodOptions(dirs[0]), decide: null });
    assert.deepEqual(noDecide.flags, []);
  });

  test("boots that differ VOID the unit, ahead of every other problem", async () => {
    const s = await broken(async (d) => {
      await rewrite(join(d, "boots.tsv"), (t) => editTsvCell(t, "rnd-c4-B", "image", "vllm/vllm-openai:v0.12.0"));
      await rm(join(d, "results", "sb-c1-A.json"));
    });
    assert.equal(s.flags[0], "boots differ in image: 'vllm/vllm-openai:v0.11.0', 'vllm/vllm-openai:v0.12.0'");
    assert.equal(s.decision!.verdict, "VOID");
    assert.equal(s.decision!.text, "VOID boots differ in image: 'vllm/vllm-openai:v0.11.0', 'vllm/vllm-openai:v0.12.0'");
  });

  test("clock offsets other than --want-gpc/--want-mem, or not recorded at boot", async () => {
    const s = await broken(async (d) => {
      await rewrite(join(d, "boots.tsv"), (t) => editTsvCell(editTsvCell(t, "sb-c1-A", "gpc_after", "0 75"), "rnd-c1-A", "mem_boot", "-"));
    });
    assert.deepEqual(s.bootBad, ["sb-c1-A: gpc_after '0 75' != '0 0'", "rnd-c1-A: mem_boot not recorded"]);
    assert.equal(s.decision!.verdict, "VOID");
    const other = await summarize(dirs[0], { ...goodOptions(dirs[0]), wantGpc: "0 75" });
    assert.ok(other.bootBad.includes("sb-c1-B: gpc_boot '0 0' != '0 75'"));
  });

  test("c1 category mapping: prompts with no / several categories, and an unverified sequence (FLAGS that do not decide)", async () => {
    const s = await broken(async (d) => {
      // a second category for the first question, and one prompt-token count changed in a c1 line
      const q = join(d, "..", "question.jsonl");
      await rewrite(q, (t) => t + JSON.stringify({ category: "rag", turns: [JSON.parse(t.split("\n")[0]).turns[0]] }) + "\n");
      await rewrite(join(d, "logs", "sb-c1-B.log"), (t) => t.replace(/(serial=29 prompt=)(\d+)/, (_m, a, p) => `${a}${Number(p) + 1}`));
    });
    assert.deepEqual(s.mappingFlags, [
      "sb-c1-A: 1 manifest prompts map to no / several categories",
      "sb-c1-B: 1 manifest prompts map to no / several categories",
      "sb-c1-B: category mapping UNVERIFIED (8 lines vs 8 prompts; prompt-token sequence differs)",
    ]);
    assert.deepEqual(s.flags, s.mappingFlags);
    assert.equal(s.decision!.verdict, "PUBLISHABLE");
    assert.equal(s.categories.find((c) => c.tag === "sb-c1-B")!.verified, false);
  });

  test("A/B spread over --spread-max fails the decision; --spread-exempt lifts the gate at that level", async () => {
    const s = await broken((d) => editJson(d, "rnd-c4-A", (o) => (o.output_throughput *= 1.1)));
    const line = s.spread!.datasets.find((x) => x.dataset === "random")!.lines.find((l) => l.conc === 4)!;
    const a = line.a!.out_tps!, b = line.b!.out_tps!;
    const sp = Math.abs(a - b) / ((a + b) / 2) * 100;
    assert.deepEqual(s.spread!.bad, [`random c4: A/B spread ${sp.toFixed(2)} % > 3 % (${a.toFixed(1)} vs ${b.toFixed(1)} tok/s)`]);
    assert.equal(s.decision!.text, `NOT-PUBLISHABLE ${s.spread!.bad[0]}`);
    const exempt = await summarize(dirs[0], { ...goodOptions(dirs[0]), spreadExempt: [4] });
    assert.equal(exempt.decision!.verdict, "PUBLISHABLE");
    assert.match(exempt.decision!.text, new RegExp(`max A/B spread ${sp.toFixed(2)} % at random c4`));
  });

  test("--decide with a pass that has no cells at all", async () => {
    const s = await broken(async () => {}, { decide: ["A", "C"] });
    assert.equal(s.decision!.text, "NOT-PUBLISHABLE pass C incomplete (random c1, random c4, specbench c1)");
  });
});
