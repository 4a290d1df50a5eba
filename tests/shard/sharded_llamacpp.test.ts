/**
 * Sharded load against the real llama-server (4 slots, -t 1) through dist/ik: two shards and one
 * process (`--shard 0/1`) run the same schedule; both merge to one schedule hash and one
 * (level, seq, prompt, salt) multiset, every request ok; every shard detects llama.cpp alike
 * (detection never reads /metrics in a sharded run), only shard 0 samples its gauges, and the
 * merged ITL holds exactly one gap per pair of token events from the outputs files. Bun only; ~25 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Column, percentiles } from "../../lib/metrics/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { llamaSkip, type LlamaServer, startLlama } from "../_helpers/llama_server.ts";
import { jsonl, loadArgs, merge, mergedRecords, type Obj, runLocalShards, shardEnv, startAt } from "./_sharded.ts";

const skip = runtime.name !== "bun" ? "heavy end-to-end tests run under Bun only" : llamaSkip();

describe("sharded load against a real llama-server", { skip }, () => {
  let server: LlamaServer;
  let dir = "";
  before(async () => {
    server = await startLlama({ slots: 4 });
    dir = await mkdtemp(join(tmpdir(), "ik-shard-llama-"));
  });
  after(async () => {
    server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("two shards and one process merge to the same schedule; llama.cpp detected alike; ITL from the outputs", async () => {
    const grid = ["--rates", "2,4", "--duration-s", "3", "--level-gap-s", "1", "--max-tokens", "16"];
    const base = (start: number) => loadArgs(server.url, start, grid).map((a, i, all) => (all[i - 1] === "--model" ? "tiny-llama" : all[i - 1] === "--warmup" ? "1" : a));
    const env = await shardEnv(dir);
    const one = { ...env, IK_RUNS_DIR: join(dir, "one") }, two = { ...env, IK_RUNS_DIR: join(dir, "two") };
    const [r1] = await runLocalShards(1, base(startAt(4000)), { env: one, staggerMs: 0, jobIndex: false });
    assert.equal(r1.code, 0, r1.stderr);
    const r2 = await runLocalShards(2, base(startAt(4000)), { env: two, staggerMs: 0, jobIndex: false });
    for (const r of r2) assert.equal(r.code, 0, r.stderr);
    const slices = r2.map((r) => JSON.parse(r.stdout) as Obj);
    for (const sl of slices) assert.equal(((sl.identity as Obj).engine as Obj).name, "llamacpp", JSON.stringify((sl.identity as Obj).engine));
    const lv = (sl: Obj) => ((sl.data as Obj).levels as Obj[])[0];
    assert.equal((lv(slices[0]).server as Obj).available, true, "shard 0 samples llama-server's gauges");
    assert.equal(lv(slices[1]).server, null, "shard 1 does not scrape");

    const m1 = await merge([one.IK_RUNS_DIR], env, join(dir, "m1")), m2 = await merge([two.IK_RUNS_DIR], env, join(dir, "m2"));
    assert.equal(m1.code, 0, m1.stderr);
    assert.equal(m2.code, 0, m2.stderr);
    const a = await mergedRecords(m1, join(dir, "m1")), b = await mergedRecords(m2, join(dir, "m2"));
    const merge_ = (x: { measured: Obj }) => (x.measured.data as Obj).merge as Obj;
    assert.equal(merge_(b).schedule_hash, merge_(a).schedule_hash);
    const set = async (d: string) => jsonl(await readFile(join(d, "requests.jsonl"), "utf8")).map((r) => `${r.level}\t${r.seq}\t${r.id}\t${r.salt}`).sort();
    assert.deepEqual(await set(b.dir), await set(a.dir));
    for (const x of [a, b]) {
      const rows = jsonl(await readFile(join(x.dir, "requests.jsonl"), "utf8"));
      assert.ok(rows.length >= 10 && rows.every((r) => r.ok === true), `${rows.filter((r) => !r.ok).map((r) => r.error).join("; ")}`);
      for (const l of (x.measured.data as Obj).levels as Obj[]) {
        const s = l.summary as { itl_ms: { n: number; p50: number }; n_failed: number };
        const gaps = rows.filter((r) => r.level === l.name).reduce((acc, r) => acc + (r.n_token_events as number) - 1, 0);
        assert.equal(s.itl_ms.n, gaps, `${l.name}: one ITL per gap between token events`);
        assert.ok(s.itl_ms.p50 > 0 && s.n_failed === 0);
        // The very gaps of the merged outputs files, as the record's ITL percentiles (a level keeps
        // its ITL as 32-bit floats: lib/metrics/column.ts).
        const col = new Column(256, "f32");
        for (const d of jsonl(await readFile(join(x.dir, "outputs", "llamacpp", `load-${l.name}.jsonl`), "utf8"))) {
          const ev = (d.timings as { event_ms: number[] }).event_ms;
          for (let i = 1; i < ev.length; i++) col.push(ev[i] - ev[i - 1]);
        }
        assert.deepEqual(s.itl_ms, percentiles(col), `${l.name}: ITL from the outputs files`);
      }
    }
  });
});

if (skip) test("sharded load against a real llama-server (skipped)", { skip }, () => {});
