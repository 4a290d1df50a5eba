/**
 * What a partial `ik merge` claims, through the binary: one short `--shard 0/1` run against `ik mock`
 * split by seq into three slices, then edited (artifacts re-hashed) into an absent or an
 * interrupted shard. A lower bound sets `n_star_lower_bound` as one process's does; a level cut
 * short by an interrupt is not judged and N* stops below it; and `--group` of a group that left only
 * staging journals says so (65) as the merge without `--group` does. Bun only: about 10 s.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { jsonl, merge, type Obj, oneSliceRun, splitSlice } from "./_sharded.ts";

const skip = runtime.name !== "bun" ? "end-to-end merge tests run under Bun only" : false;
let dir = "";
let env: Record<string, string> = {};
let run: Awaited<ReturnType<typeof oneSliceRun>> | undefined;
let sliceDir = "";

const data = (r: Obj) => r.data as Obj;
const lines = (docs: Obj[]) => docs.map((x) => JSON.stringify(x) + "\n").join("");

describe("ik merge: what a partial merge claims", { skip }, () => {
  before(async () => {
    run = await oneSliceRun("ik-merge-partial-");
    ({ dir, env, sliceDir } = run);
  });
  after(() => run?.close());

  test("an absent shard: N* a scaled lower bound, and n_star_lower_bound says so", async () => {
    const root = join(dir, "absent");
    const dirs = await splitSlice(sliceDir, 3, root);
    const r = await merge([dirs[0], dirs[2]], env, join(root, "m"), ["--allow-partial"]);
    assert.equal(r.code, 0, r.stderr);
    const cd = JSON.parse(r.stdout).data;
    assert.equal(cd.rate_star_rps_nominal, 30);
    assert.equal(cd.rate_star_rps_bound, "lower");
    assert.ok(cd.rate_star_rps < 30, String(cd.rate_star_rps));
    assert.equal(cd.n_star_lower_bound, true, "a lower bound is flagged as one process flags its own");
  });

  test("an absent shard and no level within the SLO: no N*, so no bound is stated", async () => {
    const root = join(dir, "absent-none");
    const dirs = await splitSlice(sliceDir, 3, root, async (_rec, _k, d) => {
      const rows = jsonl(await readFile(join(d, "requests.jsonl"), "utf8"));
      for (const x of rows) if (x.ok) x.ttft_ms = 60_000;
      await writeFile(join(d, "requests.jsonl"), lines(rows));
    });
    const r = await merge([dirs[0], dirs[2]], env, join(root, "m"), ["--allow-partial"]);
    assert.equal(r.code, 0, r.stderr);
    const cd = JSON.parse(r.stdout).data;
    assert.equal(cd.rate_star_rps, null);
    assert.equal(cd.rate_star_rps_nominal, null);
    assert.equal(cd.rate_star_rps_bound, null, "no rate, no bound of one");
    assert.equal(cd.n_star_lower_bound, false);
  });

  test("a shard interrupted during r30: r30 is not judged at its own rate, r20 keeps its verdict, N* >= 20", async () => {
    const root = join(dir, "cut");
    const dirs = await splitSlice(sliceDir, 3, root, async (rec, k, d) => {
      if (k !== 1) return;
      // Shard 1 was SIGTERMed in r30: two of its r30 requests went, the second aborted in flight.
      rec.complete = false;
      const entry = (data(rec).levels as Obj[]).find((l) => l.name === "r30") as Obj;
      Object.assign(entry, { interrupted: true, not_judged: "interrupted", not_achieved: null });
      const rows = jsonl(await readFile(join(d, "requests.jsonl"), "utf8"));
      const r30 = rows.filter((x) => x.level === "r30").slice(0, 2);
      Object.assign(r30[1], { ok: false, error: "interrupted", error_kind: "aborted", status: 0, ttft_ms: null, tpot_ms: null, e2e_ms: null, n_tokens: 0 });
      await writeFile(join(d, "requests.jsonl"), lines([...rows.filter((x) => x.level === "r20"), ...r30]));
      const keep = new Set(r30.map((x) => x.seq));
      for (const f of ["outputs", "inputs"]) {
        const p = join(d, f, "vllm", "load-r30.jsonl");
        await writeFile(p, lines(jsonl(await readFile(p, "utf8")).filter((x) => keep.has(x.seq))));
      }
    });
    const r = await merge(dirs, env, join(root, "m"), ["--allow-partial"]);
    assert.equal(r.code, 0, r.stderr);
    const cap = JSON.parse(r.stdout);
    const measured = JSON.parse(await readFile(join(root, "m", cap.data.measurement, "evidence.json"), "utf8"));
    const [r20, r30] = measured.data.levels as Obj[];
    assert.equal(r20.not_judged, null);
    assert.equal((r20.summary as Obj).slo_ok, true);
    assert.equal(r30.not_judged, "interrupted");
    assert.equal((r30.summary as Obj).slo_ok, null);
    assert.equal(r30.target_rate_rps, 30, "a level cut short in time keeps its rate");
    assert.equal(r30.planned, r30.planned_all);
    assert.equal(r30.aborted, 1);
    assert.equal(cap.data.rate_star_rps_nominal, 20);
    assert.equal(cap.data.rate_star_rps, 20, "r20 was sent whole: its share is 1");
    assert.equal(cap.data.n_star_lower_bound, true);
    assert.match(cap.data.reason, /level 30 was not judged \(interrupted\): N\* is at least 20/);
    assert.match(cap.summary, /^PARTIAL \(1\/3 interrupted\): vllm mock-model: max rate >= 20\.000 req\/s \(a lower bound: nominal 20, 100\.0 % of its load sent\)/);
    assert.equal((cap.data.curve as Obj[]).find((c) => c.name === "r30")?.slo_ok, null);
    assert.match(measured.limitations.join("\n"), /not judged: r30 \(shard 1\/3 interrupted during it\)/);
  });

  test("--group of a group that left only staging journals: 65, said as without --group; an unknown group names it", async () => {
    const root = join(dir, "staging-only");
    const st = join(root, ".staging", "serve_benchmark-20260101T000000Z-0000aaaa");
    await mkdir(st, { recursive: true });
    await writeFile(join(st, "shard.json"), JSON.stringify({ evidence_id: "serve_benchmark-20260101T000000Z-0000aaaa", group_id: "gK", shard: "0/2", k: 0, s: 2, start_at_ms: 0 }) + "\n");
    const plain = await merge([root], env, join(root, "m"));
    const grouped = await merge([root], env, join(root, "m"), ["--group", "gK"]);
    for (const r of [plain, grouped]) {
      assert.equal(r.code, 65, r.stderr);
      assert.match(r.stderr, /^ik: \S+: found no finished slice, only staging journals of killed \(or still running\) shards; /);
    }
    const other = await merge([root], env, join(root, "m"), ["--group", "nope"]);
    assert.equal(other.code, 64, other.stderr);
    assert.match(other.stderr, /^ik: --group: no slice of group 'nope' here \(found: gK\)/);
  });
});

if (skip) test("ik merge partial claims (skipped)", { skip }, () => {});
