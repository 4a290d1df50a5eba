/**
 * A load level's column spill: one file in the run's folder, unlinked at once (never in the store),
 * read back exactly; a level given the run's folder parks its columns there and closes the file
 * when its numbers are read; a level's summary is the same with the spill as without it.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, write } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { FileSpill } from "../../lib/bench/column_spill.ts";
import { runLevel } from "../../lib/bench/load_level.ts";
import { PromptPool } from "../../lib/bench/prompt_pool.ts";
import { CHUNK_VALUES, LevelAccumulator, type LevelRow } from "../../lib/metrics/mod.ts";
import { loadBuiltinPromptSet } from "../../lib/prompts/builtin.ts";
import { SeededRng } from "../../lib/stats/mod.ts";
import { fakeRunner, levelWriters, ONE_TOKEN_SSE } from "./_level_fixture.ts";

/** The spill files this process holds open, by the path each was opened at. */
function openSpills(): string[] {
  if (!existsSync("/proc/self/fd")) return [];
  const out: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const to = readlinkSync(`/proc/self/fd/${fd}`);
      if (to.includes("/.columns-")) out.push(to);
    } catch { /* closed meanwhile */ }
  }
  return out;
}

test("FileSpill: a file in the folder that is unlinked at once; a chunk copied, written in the background and read back at its handle", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-spill-"));
  try {
    const s = FileSpill.open(dir, "r2000/x");
    assert.ok(s, "a spill opens in a writable folder");
    assert.deepEqual(readdirSync(dir), [], "the file is unlinked as soon as it is open");
    const a = new Float64Array([1.5, -2, 3e9, 0]), b = new Float32Array([7.25, 8]);
    const ha = s.park(new Uint8Array(a.buffer)), hb = s.park(new Uint8Array(b.buffer));
    assert.equal(ha, 0);
    assert.equal(hb, 32);
    assert.equal(s.bytes, 40);
    assert.equal(s.heldBytes, 40, "both copies held while their writes are in flight");
    a.fill(9); // the caller refills its array: what was parked is a copy
    const ra = new Float64Array(4), rb = new Float32Array(2);
    s.read(ha as number, new Uint8Array(ra.buffer));
    assert.deepEqual(Array.from(ra), [1.5, -2, 3e9, 0], "read back while in flight: the copy");
    await s.settled();
    assert.equal(s.heldBytes, 0, "written: no copy kept");
    ra.fill(0);
    s.read(hb as number, new Uint8Array(rb.buffer));
    s.read(ha as number, new Uint8Array(ra.buffer));
    assert.deepEqual(Array.from(ra), [1.5, -2, 3e9, 0], "read back from the file");
    assert.deepEqual(Array.from(rb), [7.25, 8]);
    assert.throws(() => s.read(40, new Uint8Array(8)), /spill file ended at byte 40 of 40/, "a read past the end is an error, not zeros");
    await s.close();
    await s.close();
    assert.equal(s.park(new Uint8Array(8)), null, "closed: a chunk stays with its column");
    assert.throws(() => s.read(0, new Uint8Array(8)), /already closed/);
    assert.deepEqual(readdirSync(dir), []);
    assert.equal(FileSpill.open(join(dir, "missing"), "c1"), null, "no folder: no spill (the columns keep their values)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("FileSpill: a chunk whose write fails is kept in memory and read back; no later chunk is parked", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-spill-fail-"));
  try {
    let writes = 0;
    const s = FileSpill.open(dir, "c1", (fd, buf, off, len, pos, done) => {
      // The first chunk goes to disk in two short writes; the second fails as a full disk does.
      writes++;
      if (pos < 16) return write(fd, buf, off, Math.min(len, 8), pos, done);
      setTimeout(() => done(Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" }), 0), 1);
    })!;
    const first = new Float64Array([1, 2]), second = new Float64Array([3, 4]);
    const h1 = s.park(new Uint8Array(first.buffer)), h2 = s.park(new Uint8Array(second.buffer));
    assert.deepEqual([h1, h2], [0, 16]);
    await s.settled();
    assert.equal(writes, 3, "the first chunk took two writes (a short one, then the rest), the second one");
    assert.equal(s.heldBytes, 16, "the failed chunk's copy is kept");
    assert.equal(s.park(new Uint8Array(8)), null, "after a failed write, chunks stay with their columns");
    const back = new Float64Array(2);
    s.read(h2 as number, new Uint8Array(back.buffer));
    assert.deepEqual(Array.from(back), [3, 4]);
    s.read(h1 as number, new Uint8Array(back.buffer));
    assert.deepEqual(Array.from(back), [1, 2]);
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a level's summary with its columns parked in a file equals the one kept in memory", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-spill-acc-"));
  const rng = new SeededRng(5);
  const spill = FileSpill.open(dir, "c1")!;
  try {
    const parked = new LevelAccumulator({ ttftP95Ms: 300 }, spill), kept = new LevelAccumulator({ ttftP95Ms: 300 });
    const n = CHUNK_VALUES * 2 + 123;
    for (let i = 0; i < n; i++) {
      const ok = i % 50 !== 7;
      const ttft = 20 + rng.next() * 400;
      const row: LevelRow = {
        ok, error_kind: ok ? null : "http_503", ttft_ms: ok ? ttft : null, tpot_ms: ok ? 2 + rng.next() * 5 : null, e2e_ms: ok ? ttft + 100 * rng.next() : null,
        n_tokens: ok ? 8 : null, send_lag_ms: rng.next() * 2, t_send_ns: i * 1e6, t_end_ns: i * 1e6 + 5e8,
      };
      const gaps = ok ? Array.from({ length: 7 }, () => Math.round(rng.next() * 1e5) / 1e4) : [];
      parked.add(row, gaps);
      kept.add(row, gaps);
    }
    // Every column past a chunk parked its full ones: TTFT, TPOT and e2e (ok rows) and the send lag
    // (every row) 1 or 2 chunks of doubles, the ITL 12 chunks of 32-bit floats.
    const ok = n - Math.ceil((n - 7) / 50);
    const full = (k: number) => Math.floor(k / CHUNK_VALUES);
    const expected = (3 * full(ok) + full(n)) * CHUNK_VALUES * 8 + full(ok * 7) * CHUNK_VALUES * 4;
    assert.equal(spill.bytes, expected);
    await spill.settled();
    assert.equal(spill.heldBytes, 0);
    assert.deepEqual(parked.summary(2), kept.summary(2));
  } finally {
    await spill.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a level given the run's folder holds its spill file open while it runs, and closes it when its numbers are read", { skip: !existsSync("/proc/self/fd") && "no /proc/self/fd" }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "ik-spill-level-"));
  try {
    const seen: string[][] = [];
    const fetch = () => {
      seen.push(openSpills().filter((p) => p.startsWith(dir)));
      return Promise.resolve(new Response(ONE_TOKEN_SSE, { status: 200, headers: { "content-type": "text/event-stream" } }));
    };
    const runner = fakeRunner(fetch);
    const { journal, outputs, inputs } = await levelWriters(dir);
    const deps = { runner, pool: new PromptPool(loadBuiltinPromptSet().prompts), slo: {}, gpuCount: 0, label: "t", journal, outputs, inputs };
    const spec = { index: 0, level: 2, name: "c2", ratePerS: null, workers: 2, durationS: 30, maxRequests: 4, burstiness: 1, seed: [1] };
    const res = await runLevel(spec, { ...deps, spillDir: dir });
    assert.equal(res.summary.n_ok, 4);
    assert.equal(seen.length, 4);
    for (const s of seen) {
      assert.equal(s.length, 1, "one spill file open while the level runs");
      assert.match(s[0], /\/\.columns-c2-\d+-\d+ \(deleted\)$/, "in the run's folder, unlinked");
    }
    assert.deepEqual(openSpills().filter((p) => p.startsWith(dir)), [], "closed when the level ends");
    seen.length = 0;
    await runLevel(spec, deps);
    assert.deepEqual(seen.flat(), [], "no folder given: no spill");
    await Promise.all([journal.close(), outputs.close(), inputs.close()]);
    assert.deepEqual(readdirSync(dir).sort(), ["inputs.jsonl", "outputs.jsonl", "requests.jsonl"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
