/**
 * A column with a spill parks every full chunk there and refills one array, and reads the parked
 * chunks back for its percentiles: every way of reading a column gives what a column kept wholly in
 * memory gives, and a spill that refuses a chunk leaves that chunk in memory.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHUNK_VALUES, type ChunkSpill, Column } from "../../lib/metrics/mod.ts";
import { shortestF32 } from "../../lib/metrics/column.ts";
import { SeededRng } from "../../lib/stats/mod.ts";

/** An in-memory spill: copies of the parked bytes, and which parks it refused. */
class FakeSpill implements ChunkSpill {
  readonly parked: Uint8Array[] = [];
  refused = 0;
  constructor(readonly refuse: (i: number) => boolean = () => false) {}
  park(bytes: Uint8Array): number | null {
    if (this.refuse(this.parked.length + this.refused)) {
      this.refused++;
      return null;
    }
    this.parked.push(bytes.slice());
    return this.parked.length - 1;
  }
  read(handle: number, into: Uint8Array): void {
    assert.equal(into.byteLength, this.parked[handle].byteLength, "read back into a chunk of the parked size");
    into.set(this.parked[handle]);
  }
}

function values(n: number, seed: number): number[] {
  const rng = new SeededRng(seed);
  const rnd = () => rng.next();
  return Array.from({ length: n }, (_, i) => (i % 97 === 0 ? 0 : i % 89 === 0 ? -rnd() * 10 : Math.round(rnd() * 5000 * 1e4) / 1e4));
}

function fill(c: Column, vs: number[]): void {
  // Single pushes and batches, across the chunk edges.
  for (let i = 0; i < vs.length;) {
    if (i % 3 === 0) c.push(vs[i++]);
    else {
      const n = Math.min(vs.length - i, 1 + (i % 1000));
      c.pushAll(vs.slice(i, i + n));
      i += n;
    }
  }
}

for (const kind of ["f64", "f32"] as const) {
  test(`a ${kind} column with a spill parks each full chunk and reads the same values back as one kept in memory`, () => {
    const vs = values(Math.floor(2.5 * CHUNK_VALUES), kind === "f64" ? 7 : 8);
    const spill = new FakeSpill();
    const parked = new Column(3, kind, spill), kept = new Column(3, kind);
    fill(parked, vs);
    fill(kept, vs);
    assert.equal(spill.parked.length, 2, "two full chunks parked");
    for (const p of spill.parked) assert.equal(p.byteLength, CHUNK_VALUES * (kind === "f64" ? 8 : 4));
    assert.equal(parked.length, vs.length);
    assert.deepEqual(parked.toArray(), kept.toArray(), "push order kept across parked chunks");
    assert.deepEqual(parked.sorted(), kept.sorted());
    assert.deepEqual(parked.percentilesInPlace(), kept.percentilesInPlace());
    // More values after a read go on into the same chunks.
    const more = values(CHUNK_VALUES, 9);
    fill(parked, more);
    fill(kept, more);
    assert.equal(spill.parked.length, 3);
    assert.deepEqual(parked.sorted(), kept.sorted());
    assert.deepEqual(parked.percentilesInPlace(), kept.percentilesInPlace());
  });
}

test("a chunk the spill refuses stays in memory; the column's values are the same", () => {
  const vs = values(4 * CHUNK_VALUES + 5, 11);
  const spill = new FakeSpill((i) => i === 1 || i === 2);
  const c = new Column(256, "f64", spill), kept = new Column();
  fill(c, vs);
  fill(kept, vs);
  assert.equal(spill.refused, 2);
  assert.equal(spill.parked.length, 2);
  assert.deepEqual(c.toArray(), vs);
  assert.deepEqual(c.sorted(), kept.sorted());
  assert.deepEqual(c.percentilesInPlace(), kept.percentilesInPlace());
});

test("a 32-bit column's percentiles by counting its bit patterns: the nearest ranks of a sorted copy (negatives, ±0, infinities, ties, values within one bin), its push order kept, parked or not", () => {
  const rng = new SeededRng(21);
  const kinds: [string, () => number][] = [
    ["spread over decades", () => rng.next() * 10 ** (Math.floor(rng.next() * 8) - 3)],
    ["negatives and zeros", () => (rng.next() < 0.1 ? (rng.next() < 0.5 ? -0 : 0) : (rng.next() - 0.5) * 100)],
    ["all in one bin (8 ms ± a few ULPs)", () => 8 + Math.floor(rng.next() * 40) * 2 ** -20],
    ["ties and infinities", () => [1, 2, 2, 2, 3, Infinity, -Infinity, 5e-3][Math.floor(rng.next() * 8)]],
  ];
  for (const [name, draw] of kinds) {
    for (const n of [1, 2, 5, 1000, CHUNK_VALUES + 17]) {
      const vs = Array.from({ length: n }, draw);
      for (const spill of [null, new FakeSpill()]) {
        const c = new Column(16, "f32", spill);
        fill(c, vs);
        const before = c.toArray();
        const want = Float32Array.from(vs).sort();
        const at = (p: number) => shortestF32(want[Math.ceil((p / 100) * n) - 1]);
        const got = c.percentilesInPlace();
        assert.deepEqual(got, { n, p50: at(50), p90: at(90), p95: at(95), p99: at(99) }, `${name}, n ${n}, ${spill ? "parked" : "in memory"}`);
        assert.deepEqual(c.toArray(), before, "the push order is kept");
      }
    }
  }
});
