/**
 * `ik compare` end to end through dist/ik, on records made by `ik bench serve` against two
 * `ik mock` servers (TPOT 5 ms and 8 ms), loopback only (~10 s, both runtimes):
 * - every ratio equals median-of-per-round-medians B / A computed here from requests.jsonl; TPOT's
 *   is the mocks' 8/5 as the mocks' own request logs measured it (a busy host makes the mock itself
 *   late: the expectation follows its stamps, never the configured 5 and 8 ms); the CI holds the
 *   ratio; the same output twice;
 * - refusals, one line on stderr, exit 65: a record with another --max-tokens (naming it), an
 *   incomplete record (accepted with --allow-incomplete), a record whose rows were changed, a
 *   record of a schema this ik does not know (compare and report); a record from another ik
 *   version is compared with a note.
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type IkProcess, ikBin, runIk, startArgv, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";

let dir: string, runs: string;
const mocks: IkProcess[] = [];
const ids: Record<string, string> = {};
/** The median TPOT each mock's own request log shows for the requests of records a and b. */
const mockTpot: Record<string, number> = {};

async function mock(tpotMs: number): Promise<string> {
  const m = startArgv([ikBin()], ["mock", "--port", "0", "--tpot-ms", String(tpotMs), "--request-log"]);
  mocks.push(m);
  const hit = await m.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  return hit[1];
}

async function serve(base: string, maxTokens = 8): Promise<string> {
  const r = await runIk(["bench", "serve", "--base-url", base, "--model", "mock-model", "--rounds", "3", "--max-tokens", String(maxTokens), "--warmup", "0",
    "--buckets", "very_short,short", "--json"], { env: { IK_RUNS_DIR: runs }, timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).evidence_id;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-compare-"));
  runs = join(dir, "runs");
  const [fast, slow] = await Promise.all([mock(5), mock(8)]);
  ids.a = await serve(fast);
  ids.b = await serve(slow);
  // The truth of TPOT is what each mock stamped: (last_ms - first_ms) / (gen - 1) per request.
  for (const [key, m] of [["a", mocks[0]], ["b", mocks[1]]] as const) {
    const tpots = m.stdout().split("\n").flatMap((l) => {
      const f = Object.fromEntries([...l.matchAll(/(\w+)=([\d.]+)/g)].map((x) => [x[1], Number(x[2])]));
      return l.startsWith("ik-request ") && f.gen > 1 ? [(f.last_ms - f.first_ms) / (f.gen - 1)] : [];
    });
    mockTpot[key] = med(tpots);
  }
  ids.c = await serve(fast, 12);
});

after(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
  await rm(dir, { recursive: true, force: true });
});

const compare = (...args: string[]) => runIk(["compare", ...args], { env: { IK_RUNS_DIR: runs }, timeoutMs: 30_000 });

async function rowsOf(id: string): Promise<Record<string, any>[]> {
  return (await readFile(join(runs, id, "requests.jsonl"), "utf8")).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** The seed's median (nearest rank: the ceil(n/2)-th smallest), as ik computes it everywhere. */
function med(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.ceil(s.length / 2) - 1];
}

function perRound(rows: Record<string, any>[], bucket: string, metric: string): Map<number, number> {
  const by = new Map<number, number[]>();
  for (const r of rows) if (r.ok && (bucket === "all" || r.bucket === bucket)) by.set(r.round, [...(by.get(r.round) ?? []), r[metric]]);
  return new Map([...by].map(([k, v]) => [k, med(v)]));
}

describe("ik compare (dist/ik, two mocks)", { skip: BINARY_ONLY_SUITE }, () => {
  test("ratios match an independent computation from the rows; TPOT ratio is 8/5; deterministic", async () => {
    const r = await compare(ids.a, ids.b, "--json");
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.kind, "compare");
    assert.deepEqual(out.rounds.paired, [0, 1, 2]);
    const [ra, rb] = [await rowsOf(ids.a), await rowsOf(ids.b)];
    assert.deepEqual([...new Set(out.rows.map((x: any) => x.bucket))], ["very_short", "short", "all"]);
    for (const row of out.rows) {
      const pa = perRound(ra, row.bucket, row.metric), pb = perRound(rb, row.bucket, row.metric);
      const want = med([...pb.values()]) / med([...pa.values()]);
      assert.ok(Math.abs(row.ratio - want) < 1e-9, `${row.bucket} ${row.metric}: ${row.ratio} vs ${want}`);
      assert.ok(row.ratio_ci95[0] <= row.ratio && row.ratio <= row.ratio_ci95[1], JSON.stringify(row));
    }
    const tpot = out.rows.find((x: any) => x.bucket === "all" && x.metric === "tpot_ms");
    const truth = mockTpot.b / mockTpot.a; // 8/5 when the mocks ran on time
    assert.ok(Math.abs(truth - 1.6) < 0.2, `the mocks' own TPOT ratio ${truth}`);
    assert.ok(Math.abs(tpot.ratio - truth) < 0.05, `${tpot.ratio} vs the mocks' ${truth}`);
    assert.equal(tpot.reading, "B worse");
    const again = await compare(ids.a, ids.b, "--json");
    assert.equal(again.stdout, r.stdout);
    const text = await compare(join(runs, ids.a), join(runs, ids.b, "evidence.json"));
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^compare: B \/ A, paired by round over 3 round\(s\)/);
    assert.match(text.stdout, /\nall +tpot_ms +[\d.]+ ms +[\d.]+ ms +1\.[56]\d* +[\d.]+ - [\d.]+ +3 +B worse\n/);
  });

  test("--first-round: records whose rounds ran at the same positions pair by round number, not by index (bench rounds after a failed cell)", async () => {
    // A ran rounds 0, 1, 2; B ran rounds 0 and 2 (its round 1 failed): B's second round pairs with A's third.
    const chain = async (base: string, rounds: number[]): Promise<string> => {
      let id: string | null = null;
      for (const k of rounds) {
        const r = await runIk(["bench", "serve", "--base-url", base, "--model", "mock-model", "--rounds", "1", "--first-round", String(k), "--max-tokens", "8", "--warmup", "0",
          "--buckets", "very_short", "--json", ...(id ? ["--extend", id] : [])], { env: { IK_RUNS_DIR: runs }, timeoutMs: 60_000 });
        assert.equal(r.code, 0, r.stderr);
        id = JSON.parse(r.stdout).evidence_id as string;
      }
      return id as string;
    };
    const base = (await mocks[0].waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
    const a = await chain(base, [0, 1, 2]);
    const b = await chain(base, [0, 2]);
    const rowsB = (await readFile(join(runs, b, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual([...new Set(rowsB.map((x) => x.round))], [0, 2]);
    const r = await compare(a, b, "--json");
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.deepEqual(c.rounds, { a: [0, 1, 2], b: [0, 2], paired: [0, 2] });
    // No round number in common: nothing to pair, refused (it printed a table of n/a, exit 0).
    const far = await chain(base, [7]);
    const none = await compare(a, far);
    assert.equal(none.code, 65, none.stderr);
    assert.match(none.stderr, /^ik: compare: \S+ and \S+ have no round index in common \(A rounds 0-2, B rounds 7\); compare pairs rounds by index; rerun one with bench serve --first-round/);
    assert.equal(none.stderr.trim().split("\n").length, 1, none.stderr);
    // A round number at or before the extended record's last is refused before anything is sent.
    const back = await runIk(["bench", "serve", "--base-url", base, "--model", "mock-model", "--rounds", "1", "--first-round", "2", "--max-tokens", "8", "--warmup", "0",
      "--buckets", "very_short", "--extend", b], { env: { IK_RUNS_DIR: runs }, timeoutMs: 60_000 });
    assert.equal(back.code, 64);
    assert.match(back.stderr, /^ik: --first-round: 2 is not after the extended record's last round \(2\); give --first-round 3 or more, or drop it/m);
  });

  test("refuses another request set, naming the flag (exit 65, one line)", async () => {
    const r = await compare(ids.a, ids.c);
    assert.equal(r.code, 65);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /^ik: compare: .* did not ask the same requests: request_set differs \(A [0-9a-f]{12}, B [0-9a-f]{12}\): --max-tokens 8 vs 12;/);
  });

  test("refuses an incomplete record unless --allow-incomplete; refuses changed rows", async () => {
    const store2 = join(dir, "copy");
    await cp(join(runs, ids.b), join(store2, ids.b), { recursive: true });
    const ev = join(store2, ids.b, "evidence.json");
    const rec = JSON.parse(await readFile(ev, "utf8"));
    await writeFile(ev, JSON.stringify({ ...rec, complete: false }));
    const r = await compare(ids.a, join(store2, ids.b));
    assert.equal(r.code, 65);
    assert.match(r.stderr, /^ik: compare B: .* is incomplete \(its run was interrupted\); pass --allow-incomplete/);
    const ok = await compare(ids.a, join(store2, ids.b), "--allow-incomplete");
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /B is incomplete \(interrupted\); compared anyway/);
    await writeFile(join(store2, ids.b, "requests.jsonl"), (await readFile(join(runs, ids.b, "requests.jsonl"), "utf8")).replace(/"ttft_ms":\d/, '"ttft_ms":9'));
    const bad = await compare(ids.a, join(store2, ids.b), "--allow-incomplete");
    assert.equal(bad.code, 65);
    assert.match(bad.stderr, /requests\.jsonl' \(requests\) changed/);
  });

  test("a record of a newer schema: compare and report refuse it (65, one line naming the file); another ik version: a note", async () => {
    const store3 = join(dir, "schema");
    await cp(join(runs, ids.b), join(store3, ids.b), { recursive: true });
    const ev = join(store3, ids.b, "evidence.json");
    const rec = JSON.parse(await readFile(ev, "utf8"));
    await writeFile(ev, JSON.stringify({ ...rec, schema: 99 }));
    const refused = [await compare(ids.a, join(store3, ids.b)), await runIk(["report", join(store3, ids.b)], { env: { IK_RUNS_DIR: runs }, timeoutMs: 30_000 })];
    for (const r of refused) {
      assert.equal(r.code, 65, r.stderr);
      assert.equal(r.stdout, "");
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`^ik: (compare B|report \\S+): ${ev.replace(/[.]/g, "\\.")}: record schema 99, which this ik does not know .*; made by a newer ik\\? use that version`));
    }
    await writeFile(ev, JSON.stringify({ ...rec, tool: { ...rec.tool, version: "9.9.9" } }));
    const noted = await compare(ids.a, join(store3, ids.b), "--json");
    assert.equal(noted.code, 0, noted.stderr);
    assert.ok(JSON.parse(noted.stdout).notes.some((n: string) => n.startsWith(`made by different ik versions: A ${rec.tool.version}, B 9.9.9`)), noted.stdout);
  });
});
