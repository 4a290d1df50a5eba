/**
 * TextParts: a response's text kept as UTF-8 in a pooled buffer while it streams (issue 21: no piece
 * string outlives its event), or as flat segments once a piece is not well-formed; equal to plain
 * concatenation, code unit for code unit, at every length and in every mode.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PIECES_PER_SEGMENT, pooledTextBuffers, pooledTextBytes, TEXT_BUFFER_BYTES, TextParts } from "../../lib/client/_text_parts.ts";

test("TextParts equals the pieces concatenated, across segment boundaries, and counts UTF-16 length", () => {
  const sizes = [0, 1, 2, PIECES_PER_SEGMENT - 1, PIECES_PER_SEGMENT, PIECES_PER_SEGMENT + 1, 3 * PIECES_PER_SEGMENT, 1000];
  for (const n of sizes) {
    const t = new TextParts();
    let want = "";
    for (let i = 0; i < n; i++) {
      const piece = i % 7 === 3 ? "" : i % 5 === 0 ? ` é${i}😀` : ` w${i}`;
      t.append(piece);
      want += piece;
      assert.equal(t.length, want.length, `length after ${i + 1} of ${n}`);
    }
    assert.equal(t.toString(), want, `text of ${n} pieces`);
    assert.equal(t.toString(), want, `read twice (${n} pieces)`);
  }
});

test("TextParts: appending after a read keeps the order", () => {
  const t = new TextParts();
  let want = "";
  for (let i = 0; i < 150; i++) {
    t.append(String(i));
    want += String(i);
    if (i % 40 === 0) assert.equal(t.toString(), want);
  }
  assert.equal(t.toString(), want);
});

test("TextParts keeps every code unit: BOM at the start, CJK, emoji, NUL, pieces far over the buffer, and a lone or split surrogate pair", () => {
  const cases: string[][] = [
    ["\ufeff", "hello"],
    ["\ufeffhi", " there"],
    ["日本語", "のテキスト", " and ascii"],
    ["a\u0000b", "😀", "x😀y", "é"],
    ["start ", "x".repeat(TEXT_BUFFER_BYTES * 3), "é".repeat(TEXT_BUFFER_BYTES), " end"],
    ["ok ", "\ud83d", "\ude00", " after"],
    ["ab\ud83d"],
    ["\ude00", "z"],
    ["a", "b\udfff", "é", "c"],
    ["ascii head ", "é\ud800"],
  ];
  for (const pieces of cases) {
    const t = new TextParts();
    let want = "";
    for (const p of pieces) {
      t.append(p);
      want += p;
      assert.equal(t.length, want.length);
    }
    const got = t.toString();
    assert.equal(got.length, want.length, JSON.stringify(pieces));
    for (let i = 0; i < want.length; i++) assert.equal(got.charCodeAt(i), want.charCodeAt(i), `code unit ${i} of ${JSON.stringify(pieces)}`);
    t.append("+more");
    assert.equal(t.toString(), want + "+more", `appended after the read: ${JSON.stringify(pieces)}`);
  }
});

test("TextParts gives its buffer back when read: the next text reuses it, and nothing piles up", () => {
  const warm = new TextParts();
  warm.append("x");
  warm.toString();
  const before = pooledTextBuffers();
  assert.ok(before >= 1, "a read text's buffer is pooled");
  for (let round = 0; round < 50; round++) {
    const texts = Array.from({ length: 8 }, () => new TextParts());
    texts.forEach((t, i) => {
      for (let k = 0; k < 100; k++) t.append(` w${i}-${k}`);
    });
    texts.forEach((t, i) => assert.ok(t.toString().startsWith(` w${i}-0 w${i}-1`)));
  }
  const after = pooledTextBuffers();
  assert.ok(after <= before + 8, `the pool holds what was in use at once (before ${before}, after ${after})`);
  const big = new TextParts();
  big.append("y".repeat(64 * 1024));
  const n = pooledTextBuffers();
  assert.equal(big.toString().length, 64 * 1024);
  assert.equal(pooledTextBuffers(), n, "a buffer over 16 KB is not kept");
});

test("TextParts: a text that outgrows its buffer gives back only the one it ends with; the pool stays within what was in use at once", () => {
  const before = pooledTextBuffers();
  for (let round = 0; round < 20; round++) {
    const texts = Array.from({ length: 8 }, () => new TextParts());
    // 20,000 bytes each: buffers outgrown on the way (2, 4, 8, 16 KB) stay out of the pool, and the
    // 32 KB one each ends with is over the pooled size.
    for (const t of texts) for (let k = 0; k < 4000; k++) t.append(" word");
    texts.forEach((t) => assert.equal(t.toString().length, 20_000));
  }
  const after = pooledTextBuffers();
  assert.ok(after <= before, `outgrown buffers piled up in the pool (before ${before}, after ${after})`);
  // 1,000 texts of 9,000 bytes read at once end in 16 KB buffers: 16 MB, of which the pool keeps 8.
  const many = Array.from({ length: 1000 }, () => new TextParts());
  for (const t of many) for (let k = 0; k < 1800; k++) t.append(" word");
  many.forEach((t) => t.toString());
  assert.ok(pooledTextBytes() <= 8 * 1024 * 1024, `the pool holds ${pooledTextBytes()} bytes`);
  assert.ok(pooledTextBytes() >= 4 * 1024 * 1024, "the pool keeps buffers up to its bound");
});
