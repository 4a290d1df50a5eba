/**
 * Record schema 2 through dist/ik (issue 18 §4.2): every key a record writes is snake_case
 * (`workload.slo` and the capacity record's `data.slo` were `ttftP95Ms`, …; a level's
 * `event_loop_lag_ms` and `server` had camelCase too), the records say `schema: 2`, and a record
 * already on disk in schema 1 (no `schema`, the camelCase keys) still reads the same: `ik report`
 * prints the same document, `ik export` finds its SLO, and `ik merge` of a schema-1 slice writes the
 * same numbers in schema 2. Loopback only, against `ik mock` (~15 s, both runtimes).
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type IkProcess, ikBin, runIk, startArgv, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";

type Obj = Record<string, any>;
let dir: string, base: string, env: Record<string, string>;
let mock: IkProcess;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-schema-"));
  const key = join(dir, "endpoint.key");
  await writeFile(key, "cd".repeat(32) + "\n", { mode: 0o600 });
  env = { IK_KEY_FILE: key };
  mock = startArgv([ikBin()], ["mock", "--port", "0"]);
  base = (await mock.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
});

after(async () => {
  await mock?.stop();
  await rm(dir, { recursive: true, force: true });
});

const ik = (args: string[], runs: string) => runIk(args, { env: { ...env, IK_RUNS_DIR: runs }, timeoutMs: 60_000 });
const readRec = async (p: string): Promise<Obj> => JSON.parse(await readFile(join(p, "evidence.json"), "utf8"));
const SLO_ARGS = ["--slo-ttft-p95-ms", "5000", "--slo-tpot-p95-ms", "50"];
const SLO_RECORD = { ttft_p95_ms: 5000, tpot_p95_ms: 50, e2e_p95_ms: null, max_fail: 0 };
const LOAD = () => ["bench", "serve", "--mode", "load", "--base-url", base, "--model", "mock-model", "--warmup", "0", "--rates", "8", "--duration-s", "1",
  "--max-requests-per-level", "4", "--max-tokens", "8", "--gpu-name", "NVIDIA H100 80GB HBM3", "--gpu-count", "1", "--gpu-price-usd-h", "2", ...SLO_ARGS];

/** Every key path of `v` that is not snake_case (a capital letter in a key). */
function camelKeys(v: unknown, path = ""): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => camelKeys(x, `${path}[${i}]`));
  if (!v || typeof v !== "object") return [];
  return Object.entries(v).flatMap(([k, x]) => [...(/[A-Z]/.test(k) ? [`${path}.${k}`] : []), ...camelKeys(x, `${path}.${k}`)]);
}

/** Rewrites a schema-2 record as the builds before it wrote it: no `schema`, camelCase SLO, loop lag and gauge start. */
function toSchema1(rec: Obj): Obj {
  const old = JSON.parse(JSON.stringify(rec));
  delete old.schema;
  const slo = (s: Obj | null) => s && { ttftP95Ms: s.ttft_p95_ms, tpotP95Ms: s.tpot_p95_ms, e2eP95Ms: s.e2e_p95_ms, maxFail: s.max_fail };
  if (old.identity?.workload?.slo) old.identity.workload.slo = slo(old.identity.workload.slo);
  if (old.data?.slo) old.data.slo = slo(old.data.slo);
  for (const l of old.data?.levels ?? []) {
    const g = l.event_loop_lag_ms;
    if (g) l.event_loop_lag_ms = { samples: g.samples, p50Ms: g.p50_ms, p99Ms: g.p99_ms, maxMs: g.max_ms };
    if (l.server && "started_at_ms" in l.server) {
      l.server.startedAtMs = l.server.started_at_ms;
      delete l.server.started_at_ms;
    }
  }
  return old;
}

describe("record schema 2: snake_case keys, and schema-1 records still read (dist/ik)", { skip: BINARY_ONLY_SUITE }, () => {
  test("single and load records: schema 2, snake_case everywhere, the SLO as ttft_p95_ms; report and export read a schema-1 copy the same", async () => {
    const runs = join(dir, "runs");
    const single = await ik(["bench", "serve", "--base-url", base, "--model", "mock-model", "--rounds", "1", "--warmup", "0", "--max-tokens", "4", "--buckets", "very_short", "--json"], runs);
    assert.equal(single.code, 0, single.stderr);
    const srec = JSON.parse(single.stdout);
    assert.equal(srec.schema, 2);
    assert.deepEqual(camelKeys(srec), []);

    const load = await ik([...LOAD(), "--json"], runs);
    assert.equal(load.code, 0, load.stderr);
    const cap = JSON.parse(load.stdout);
    const mid = cap.data.measurement as string;
    const meas = await readRec(join(runs, mid));
    assert.equal(cap.schema, 2);
    assert.equal(meas.schema, 2);
    assert.deepEqual(cap.data.slo, SLO_RECORD);
    assert.deepEqual(cap.identity.workload.slo, SLO_RECORD);
    assert.deepEqual(meas.identity.workload.slo, SLO_RECORD);
    assert.deepEqual(camelKeys(cap), [], "capacity record");
    assert.deepEqual(camelKeys(meas), [], "measured record");
    assert.equal(typeof meas.data.levels[0].event_loop_lag_ms.max_ms, "number");

    // The same records as a build before schema 2 left them on disk.
    const old = join(dir, "old");
    for (const id of [cap.evidence_id, mid]) {
      await cp(join(runs, id), join(old, id), { recursive: true });
      await writeFile(join(old, id, "evidence.json"), JSON.stringify(toSchema1(await readRec(join(runs, id))), null, 1));
    }
    assert.ok(camelKeys(await readRec(join(old, cap.evidence_id))).includes(".data.slo.ttftP95Ms"));
    const [rNew, rOld] = [await ik(["report", cap.evidence_id], runs), await ik(["report", cap.evidence_id], old)];
    assert.equal(rNew.code, 0, rNew.stderr);
    assert.equal(rOld.code, 0, rOld.stderr);
    assert.match(rNew.stdout, /\*\*SLO:\*\* TTFT p95 \\<= 5000 ms, TPOT p95 \\<= 50 ms/);
    assert.equal(rOld.stdout, rNew.stdout, "a schema-1 record reports the same");

    const exports: Obj[] = [];
    for (const [store, out] of [[runs, join(dir, "x-new")], [old, join(dir, "x-old")]]) {
      const x = await ik(["export", "--format", "vllm", "--out", out, cap.evidence_id], store);
      assert.equal(x.code, 0, x.stderr);
      const f = (await readdir(out)).find((n) => n.endsWith(".json"))!;
      exports.push(JSON.parse(await readFile(join(out, f), "utf8")));
    }
    assert.equal(typeof exports[0].request_goodput, "number", "the SLO is found: goodput is exported");
    assert.equal(exports[1].request_goodput, exports[0].request_goodput, "and found in the schema-1 record too");
  });

  test("merge: a schema-1 slice merges to the same numbers, written in schema 2", async () => {
    const slices = join(dir, "slices");
    const start = Date.now() + 1500; // the system clock now, as a fresh ik process reads it (see tests/shard/_sharded.ts startAt)
    const s = await ik([...LOAD(), "--shard", "0/1", "--start-at", String(start)], slices);
    assert.equal(s.code, 0, s.stderr);
    const sid = (await readdir(slices)).find((n) => n.startsWith("serve_benchmark-"))!;
    const slice = await readRec(join(slices, sid));
    assert.equal(slice.schema, 2);
    assert.deepEqual(camelKeys(slice), [], "slice record");
    // A level whose loop blocked past the limit on a busy host, with ik's own part known: the form
    // the CI host produced by chance, written here so the cause text is compared every run.
    Object.assign(slice.data.levels[0].event_loop_lag_ms, { max_ms: 42, own_max_ms: 3.5 });
    await writeFile(join(slices, sid, "evidence.json"), JSON.stringify(slice, null, 1));
    const oldSlices = join(dir, "old-slices");
    await cp(join(slices, sid), join(oldSlices, sid), { recursive: true });
    await writeFile(join(oldSlices, sid, "evidence.json"), JSON.stringify(toSchema1(slice), null, 1));

    const merged: Obj[] = [];
    for (const [src, store] of [[slices, join(dir, "m-new")], [oldSlices, join(dir, "m-old")]]) {
      const m = await ik(["merge", src, "--json"], store);
      assert.equal(m.code, 0, m.stderr);
      const cap = JSON.parse(m.stdout);
      const meas = await readRec(join(store, cap.data.measurement));
      assert.equal(cap.schema, 2);
      assert.deepEqual(cap.data.slo, SLO_RECORD);
      assert.deepEqual(meas.identity.workload.slo, SLO_RECORD);
      assert.deepEqual(camelKeys(cap), [], "merged capacity record");
      assert.deepEqual(camelKeys(meas), [], "merged measured record");
      merged.push({ cap, meas });
    }
    const [a, b] = merged;
    // A schema-1 record never had the loop's own lag (own_*, cpu_wait_ms): the keys both forms carry must agree.
    const lagOf = (l: Obj) => ({ samples: l.event_loop_lag_ms.samples, p50_ms: l.event_loop_lag_ms.p50_ms, p99_ms: l.event_loop_lag_ms.p99_ms, max_ms: l.event_loop_lag_ms.max_ms });
    assert.deepEqual(b.meas.data.levels.map((l: Obj) => [l.summary, lagOf(l)]), a.meas.data.levels.map((l: Obj) => [l.summary, lagOf(l)]));
    assert.ok(b.meas.data.levels.every((l: Obj) => l.event_loop_lag_ms.own_max_ms === null), "read from schema-1 slices: the own lag is unknown (null), never zero");
    // The cause of a client-limited level: a schema-1 slice cannot say how much of the block was
    // ik's own, so its text lacks that part and is otherwise the same.
    const blocked = "shard 0/1 event loop blocked 42.0 ms > 10 ms";
    assert.ok(a.cap.data.curve[0].client_limited.endsWith(`${blocked} (ik's loop's own longest block 3.5 ms; the rest was waiting for a CPU that other work held: the host's CPUs are oversubscribed)`), a.cap.data.curve[0].client_limited);
    assert.ok(b.cap.data.curve[0].client_limited.endsWith(blocked), b.cap.data.curve[0].client_limited);
    const ownPart = (c: Obj[]) => c.map((p) => ({ ...p, client_limited: typeof p.client_limited === "string" ? p.client_limited.replace(/ \(ik's loop's own longest block [^)]*\)/g, "") : p.client_limited }));
    assert.deepEqual(ownPart(b.cap.data.curve), ownPart(a.cap.data.curve));
    assert.equal(b.cap.data.rate_star_rps, a.cap.data.rate_star_rps);
  });
});
