/**
 * JsonlWriter (lib/evidence/jsonl_writer.ts) encodes rows off the turn that wrote them: a burst of
 * completions costs the event loop no JSON at write time, the rows still land whole and in order,
 * a lazy row is built once, and past MAX_PENDING queued rows the writer encodes inline (bounded).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { FLUSH_MS, JsonlWriter, MAX_PENDING, MIN_START_BYTES } from "../../lib/evidence/jsonl_writer.ts";

let dir = "";
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-jsonl-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = (p: string) => readFileSync(p, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

test("a burst of writes builds nothing at write time; after a turn or two every row is on disk, whole and in order", async () => {
  const path = join(dir, "burst.jsonl");
  const w = await JsonlWriter.open(path);
  let built = 0;
  for (let i = 0; i < 256; i++) {
    w.writeLazy(() => {
      built++;
      return { seq: i, timings: Array.from({ length: 64 }, (_, k) => k * i) };
    });
  }
  assert.equal(built, 0, "no row was built while the burst was written");
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(built, 256, "each lazy row built once, on timer turns");
  await w.close();
  const got = lines(path);
  assert.deepEqual(got.map((r) => r.seq), Array.from({ length: 256 }, (_, i) => i));
  assert.equal(got[3].timings[2], 6);
  assert.equal(w.lines, 256);
});

test("rows written within FLUSH_MS of each other go to disk in one batch; flush() writes an encoded batch at once; no row needs flush()", async () => {
  const path = join(dir, "batch.jsonl");
  const w = await JsonlWriter.open(path);
  try {
    const t0 = performance.now();
    w.write({ a: 1 });
    await new Promise((r) => setTimeout(r, FLUSH_MS / 2));
    w.write({ a: 2 });
    const seen = w.lines;
    // Only judged when this host ran the wait on time (a busy host may take longer than FLUSH_MS).
    if (performance.now() - t0 < FLUSH_MS * 0.8) assert.equal(seen, 0, "the first row waited for the rows after it");
    // Both encoded by now (a timer turn each), neither written: flush() writes them.
    await new Promise((r) => setTimeout(r, 1));
    await w.flush();
    assert.equal(w.lines, 2, "flush() wrote the open batch");
    // Journaled without flush(): a crash loses at most the last FLUSH_MS of rows.
    w.write({ a: 3 });
    for (let i = 0; i < 400 && w.lines < 3; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(w.lines, 3);
    assert.deepEqual(lines(path), [{ a: 1 }, { a: 2 }, { a: 3 }]);
  } finally {
    await w.close();
  }
});

test("flush() encodes what is queued at once; rows written after flush follow in order", async () => {
  const path = join(dir, "flush.jsonl");
  const w = await JsonlWriter.open(path);
  w.write({ a: 1 });
  w.writeLazy(() => ({ a: 2 }));
  await w.flush();
  assert.deepEqual(lines(path), [{ a: 1 }, { a: 2 }]);
  w.write({ a: 3 });
  await w.close();
  assert.deepEqual(lines(path), [{ a: 1 }, { a: 2 }, { a: 3 }]);
});

test("past MAX_PENDING queued rows, write() encodes inline (memory stays bounded)", async () => {
  const path = join(dir, "bounded.jsonl");
  const w = await JsonlWriter.open(path);
  let built = 0;
  for (let i = 0; i < MAX_PENDING; i++) w.writeLazy(() => (built++, { i }));
  assert.equal(built, MAX_PENDING, "the queue was encoded when it reached its bound");
  await w.close();
  assert.equal(lines(path).length, MAX_PENDING);
});

test("secret-looking keys are still redacted on the deferred path", async () => {
  const path = join(dir, "scrub.jsonl");
  const w = await JsonlWriter.open(path);
  w.writeLazy(() => ({ body: { api_key: "sk-abc" }, ok: true }));
  await w.close();
  assert.deepEqual(lines(path), [{ body: { api_key: "***" }, ok: true }]);
});

test("lines of every size and script land whole: multi-byte text, a line far past the batch buffer, one that ends exactly where the buffer does", async () => {
  const path = join(dir, "utf8.jsonl");
  const w = await JsonlWriter.open(path);
  const rows: { seq: number; text: string }[] = [];
  const pieces = ["naïve café ", "日本語のテキスト ", "🙂🚀 ", "plain ascii "];
  for (let i = 0; i < 300; i++) {
    // Lengths that straddle the buffer's 4 KB start and its doublings (up to ~200 KB in one line).
    const n = i % 50 === 7 ? 9000 : (i * 37) % 400;
    rows.push({ seq: i, text: Array.from({ length: n }, (_, k) => pieces[(i + k) % pieces.length]).join("") });
  }
  for (const r of rows) w.write(r);
  await w.close();
  assert.ok(readFileSync(path, "utf8").endsWith("\n"));
  assert.deepEqual(lines(path), rows);
  assert.equal(w.lines, rows.length);
  // The first batch's buffer is MIN_START_BYTES: a first line of exactly that many bytes leaves no
  // byte for its newline, and one a byte shorter fills it with the newline.
  for (const size of [MIN_START_BYTES - 1, MIN_START_BYTES, MIN_START_BYTES + 1]) {
    const p2 = join(dir, `fit-${size}.jsonl`);
    const w2 = await JsonlWriter.open(p2);
    const first = { seq: 0, text: "x".repeat(size - JSON.stringify({ seq: 0, text: "" }).length) };
    assert.equal(JSON.stringify(first).length, size);
    w2.write(first);
    w2.write({ seq: 1, text: "é" });
    await w2.close();
    assert.equal(readFileSync(p2, "utf8"), JSON.stringify(first) + "\n" + JSON.stringify({ seq: 1, text: "é" }) + "\n", `a first line of ${size} bytes`);
  }
  // A 4-byte character (a surrogate pair) across the end of the first buffer, at each offset.
  for (const shift of [0, 1, 2, 3, 4]) {
    const p3 = join(dir, `pair-${shift}.jsonl`);
    const w3 = await JsonlWriter.open(p3);
    const head = JSON.stringify({ text: "" }).length - 2; // {"text":"
    const row = { text: "x".repeat(MIN_START_BYTES - head - 4 - 2 + shift) + "🙂tail" };
    w3.write(row);
    await w3.close();
    assert.equal(readFileSync(p3, "utf8"), JSON.stringify(row) + "\n", `emoji shifted ${shift}`);
  }
});

test("batch buffers are reused once written: twenty batches make a few buffers, and a reused one never leaks an earlier batch's bytes", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-jsonl-reuse-"));
  try {
    const path = join(dir, "reuse.jsonl");
    const w = await JsonlWriter.open(path);
    const rows: { seq: number; text: string }[] = [];
    for (let batch = 0; batch < 20; batch++) {
      // Long rows then short ones in turn: a short batch written into a buffer a long one filled.
      for (let i = 0; i < 8; i++) {
        const row = { seq: rows.length, text: (batch % 2 ? "s" : "LONG-").repeat(batch % 2 ? 3 : 60) };
        rows.push(row);
        w.write(row);
      }
      await w.flush();
    }
    await w.close();
    assert.deepEqual(lines(path), rows);
    assert.ok(w.buffersMade <= 4, `${w.buffersMade} buffers for 20 batches`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
