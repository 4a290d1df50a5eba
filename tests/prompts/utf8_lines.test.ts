/** The UTF-8 line decoder names the line of the first byte that is not UTF-8, across chunks too (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { Utf8LineDecoder } from "../../lib/prompts/utf8_lines.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const cat = (...parts: (Uint8Array | number[])[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
/** The line the decoder names for these chunks, or null when they decode. */
function lineOf(chunks: Uint8Array[]): string | null {
  const d = new Utf8LineDecoder("f.jsonl", "fix it");
  try {
    for (const c of chunks) d.decode(c);
    d.decode();
    return null;
  } catch (e) {
    assert.ok(e instanceof IkError && e.code === 65, String(e));
    return e.where;
  }
}

test("a bad byte inside a chunk: its own line, after the lines of earlier chunks", () => {
  assert.equal(lineOf([enc("a\nb\n"), cat(enc("c\nd "), [0xff], enc("\ne\n"))]), "f.jsonl:4");
  assert.equal(lineOf([cat([0xff], enc("\n"))]), "f.jsonl:1");
});

test("a sequence cut by the chunk boundary and never finished: the line it is on, not the next chunk's last", () => {
  assert.equal(lineOf([cat(enc("line1\nline2 "), [0xe2, 0x82]), enc("A\nline4\nline5\nline6\n")]), "f.jsonl:2");
  // finished in the next chunk: fine
  assert.equal(lineOf([cat(enc("line1\nline2 "), [0xe2, 0x82]), cat([0xac], enc("\nline3\n"))]), null);
  // cut at the very end of the input
  assert.equal(lineOf([cat(enc("a\nb\nc "), [0xe2, 0x82])]), "f.jsonl:3");
});
