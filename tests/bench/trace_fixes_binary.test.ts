/**
 * Trace replays through dist/ik against `ik mock`, each case a reviewer's finding: a Mooncake row
 * ending on a full 512-token block shares it with a later row that extends it (cached in the mock);
 * a replay of a few rows has no seeded-schedule note; `--limit-per-bucket N` of a trace replays its
 * first N rows in time order, and a set that is a seeded sample of its trace says its arrivals are
 * thinned; the dataset's notes are the record's limitations; a trace with no span claims no rate;
 * an interrupted replay counts what it sent and ends its windows at the interrupt. Bun only (end to
 * end): about 25 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime } from "../../lib/runtime/mod.ts";

type Obj = Record<string, any>;

/** Mooncake rows `gapMs` apart, one 20-token block each (ids 100 + i). */
const rows = (n: number, gapMs: number, at = (i: number) => i * gapMs) =>
  Array.from({ length: n }, (_, i) => ({ timestamp: at(i), input_length: 20, output_length: 3, hash_ids: [100 + i] }));
const jsonl = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).join("\n") + "\n";

describe("trace replay fixes (binary)", { skip: runtime.name === "bun" ? false : "Bun only (end to end; CONTRACTS.md CI time)" }, () => {
  let dir = "";
  let env: Record<string, string> = {};
  let mock: MockProc;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-trace-fixes-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    mock = await startMock(["--engine", "vllm", "--ttft-ms", "5", "--tpot-ms", "1", "--prefix-cache-tokens", "100000", "--request-log"]);
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const serve = async (extra: string[]) => {
    const r = await runIk(["bench", "serve", "--mode", "trace", "--base-url", mock.base, "--model", "mock-model", "--warmup", "0", "--json", ...extra], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    return JSON.parse(r.stdout) as Obj;
  };
  const capacityOf = async (measuredId: string): Promise<Obj> => {
    for (const d of await readdir(env.IK_RUNS_DIR)) {
      if (!d.startsWith("capacity-")) continue;
      const rec = JSON.parse(await readFile(join(env.IK_RUNS_DIR, d, "evidence.json"), "utf8"));
      if (rec.data.measurement === measuredId) return rec;
    }
    throw new Error(`no capacity record for ${measuredId}`);
  };

  test("a full last block is shared with the row that extends it (cached 1024); two rows: no seeded-schedule note", async () => {
    const path = join(dir, "full.jsonl");
    await writeFile(path, jsonl([
      { timestamp: 0, input_length: 1024, output_length: 4, hash_ids: [7, 8] },
      { timestamp: 500, input_length: 1300, output_length: 4, hash_ids: [7, 8, 9] },
    ]));
    const before = mock.proc.stdout().split("\n").filter((l) => l.startsWith("ik-request ")).length;
    const rec = await serve(["--dataset", "mooncake", "--dataset-path", path]);
    const log = mock.proc.stdout().split("\n").filter((l) => l.startsWith("ik-request ")).slice(before)
      .map((l) => Object.fromEntries(l.slice(11).split(" ").map((kv) => kv.split("="))) as Record<string, string>)
      .sort((a, b) => Number(a.recv_wall_ms) - Number(b.recv_wall_ms));
    assert.equal(log.length, 2);
    assert.ok(Math.abs(Number(log[1].cached) - 1024) <= 16, `the second row found ${log[1].cached} tokens cached, of a 1,024-token shared prefix`);
    const lv = rec.data.levels[0];
    assert.equal(lv.schedule_note, null);
    assert.ok(!rec.limitations.some((l: string) => /seeded schedule/.test(l)), rec.limitations.join(" | "));
    assert.equal(lv.scheduled_rate_rps, rec.data.trace.mean_rate_rps);
    assert.equal(rec.data.trace.mean_rate_rps, 2, "one gap over 0.5 s");
  });

  test("--limit-per-bucket 6 of a trace: its first 6 rows in time order; the dataset's notes are limitations", async () => {
    const path = join(dir, "long.jsonl");
    const all = rows(40, 100);
    [all[20], all[21]] = [all[21], all[20]];
    await writeFile(path, jsonl(all));
    const rec = await serve(["--dataset", "mooncake", "--dataset-path", path, "--limit-per-bucket", "6"]);
    const got = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l))
      .filter((r) => r.level === "trace").sort((a, b) => a.seq - b.seq);
    assert.deepEqual(got.map((r) => r.id), [0, 1, 2, 3, 4, 5].map((i) => `mooncake-${i}`));
    assert.deepEqual([rec.data.trace.source_rows, rec.data.trace.chosen_rows, rec.data.trace.sampled], [40, 6, false]);
    assert.ok(!rec.limitations.some((l: string) => /thinned/.test(l)), "a window of the trace is not thinned");
    assert.ok(rec.limitations.some((l: string) => /^dataset: the trace's rows are not in time order/.test(l)), rec.limitations.join(" | "));
    assert.match(rec.request.args.dataset.sample, /first num_prompts rows in time order/);
  });

  test("a set that is a seeded sample of its trace: the replay says its arrivals are thinned", async () => {
    const path = join(dir, "long40.jsonl");
    await writeFile(path, jsonl(rows(40, 100)));
    const set = join(dir, "long8.jsonl");
    const b = await runIk(["prompts", "build", "--dataset", "mooncake", "--dataset-path", path, "--num-prompts", "8", "--tokenize-via", mock.base, "--model", "mock-model", "--out", set], { env });
    assert.equal(b.code, 0, b.stderr);
    const rec = await serve(["--prompts", set]);
    assert.deepEqual([rec.data.trace.source_rows, rec.data.trace.chosen_rows, rec.data.trace.sampled], [40, 8, true]);
    assert.ok(rec.limitations.some((l: string) => /^replaying 8 of 40 trace rows .*arrivals thinned, the rate is not the trace's/.test(l)), rec.limitations.join(" | "));
  });

  test("every row at one instant: no mean rate, no rate claimed, a replay's reason", async () => {
    const path = join(dir, "instant.jsonl");
    await writeFile(path, jsonl(rows(3, 0, () => 5000)));
    const rec = await serve(["--dataset", "mooncake", "--dataset-path", path, "--slo-ttft-p95-ms", "5000"]);
    assert.equal(rec.data.trace.mean_rate_rps, null);
    assert.equal(rec.data.levels[0].sent, 3);
    assert.ok(rec.limitations.some((l: string) => /^trace replay: 3 request\(s\) at the trace's own arrival times all due at one instant/.test(l)), rec.limitations.join(" | "));
    const cap = await capacityOf(rec.evidence_id);
    assert.equal(cap.data.rate_star_rps, null);
    assert.match(cap.data.reason, /^trace replay: .*no span\): no rate to claim/);
    assert.doesNotMatch(cap.data.reason, /grid/);
    assert.doesNotMatch(cap.summary, /req\/s/);
  });

  test("an interrupted replay: sent_rows what was sent, planned kept, the windows end at the interrupt", async () => {
    const path = join(dir, "slow.jsonl");
    await writeFile(path, jsonl(rows(40, 250)));
    const p = startArgv([ikBin()], ["bench", "serve", "--mode", "trace", "--base-url", mock.base, "--model", "mock-model", "--warmup", "0", "--json", "--dataset", "mooncake", "--dataset-path", path], { env });
    await p.waitFor(/load trace: sent [4-9]/, 30_000);
    const st = await p.stop("SIGINT");
    assert.equal(st.code, 130, p.stderr());
    const rec = JSON.parse(p.stdout()) as Obj;
    const lv = rec.data.levels[0], t = rec.data.trace;
    assert.ok(lv.sent >= 4 && lv.sent < 40, String(lv.sent));
    assert.deepEqual([t.sent_rows, t.planned_rows], [lv.sent, 40]);
    assert.equal(typeof t.interrupted_at_s, "number");
    const last = lv.windows.at(-1);
    assert.ok(last.t_s <= t.interrupted_at_s, `windows end at the interrupt (${t.interrupted_at_s} s): last at ${last.t_s} s`);
    assert.equal(lv.windows.reduce((a: number, w: Obj) => a + w.trace_rps, 0) >= lv.sent, true);
    assert.ok(rec.limitations.some((l: string) => new RegExp(`^trace replay: ${lv.sent} of 40 request\\(s\\)`).test(l)), rec.limitations.join(" | "));
    const cap = await capacityOf(rec.evidence_id);
    assert.match(cap.summary, new RegExp(`trace replay of ${lv.sent} of 40 \\(interrupted\\) request\\(s\\)`));
  });
});
