/** TextParts: a response's text kept as flat segments, equal to plain concatenation at every length. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PIECES_PER_SEGMENT, TextParts } from "../../lib/client/_text_parts.ts";

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
