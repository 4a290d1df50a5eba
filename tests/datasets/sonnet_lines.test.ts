/**
 * The sonnet reader reads lines as vLLM's `readlines()` does: blank lines are lines (drawn and
 * averaged like any other), each line keeps its newline and a last line without one stays without;
 * the line average is the mean of per-line counts. Budget: < 1 s, both runtimes.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { readSonnet, SONNET_BASE_PROMPT } from "../../lib/datasets/sonnet.ts";
import type { DatasetCounter } from "../../lib/datasets/types.ts";

const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
/** A BOS counter: a text is its words plus one; a request adds 7 for the chat template. */
const counter: DatasetCounter = {
  method: "tokenizer",
  request: (t) => Promise.resolve(words(t) + 7),
  text: (t) => Promise.resolve(words(t) + 1),
};

async function read(text: string, o: { inputLen: number; prefixLen: number; numPrompts?: number }) {
  const dir = await mkdtemp(join(tmpdir(), "ik-sonnet-"));
  try {
    const path = join(dir, "sonnet.txt");
    await writeFile(path, text);
    return await readSonnet({ name: "sonnet", path, counter, numPrompts: o.numPrompts ?? 3, seed: 1, inputLen: o.inputLen, prefixLen: o.prefixLen, outputLen: 5 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("sonnet lines as vLLM reads them", () => {
  test("blank lines count in the average and are drawn; the note says so", async () => {
    // 10 lines of 4 words (5 tokens each) and 2 blank lines (1 token each): vLLM's average is
    // 52 / 12 = 4.33, so 22 tokens left after the 18 of the instruction make round(5.08) = 5 lines
    // (dropping the blank lines would give an average of 5 and 4 lines).
    const text = ["a b c d", "", "e f g h", "i j k l", "m n o p", "", "q r s t", "u v w x", "y z a b", "c d e f", "g h i j", "k l m n"].join("\n") + "\n";
    const r = await read(text, { inputLen: 40, prefixLen: 0 });
    assert.equal(r.options.avg_line_tokens, 4.333);
    assert.equal(r.options.input_lines, 5);
    assert.equal(r.rows, 12);
    assert.ok(r.notes.some((n) => /2 blank line\(s\) kept/.test(n)), r.notes.join("; "));
    for (const l of r.lines) {
      const body = String(l.messages[0].content).slice(SONNET_BASE_PROMPT.length);
      assert.equal(body.split("\n").length - 1, 5, "five lines, each with its newline: " + JSON.stringify(body));
    }
  });

  test("the prefix is the file's first lines once (data[:n]); a last line without a newline stays without", async () => {
    const text = "a b c d\ne f g h\ni j k l";
    // avg 5; prefix (38 - 18) / 5 = 4 lines wanted but the file has 3: all three, not wrapped round.
    const r = await read(text, { inputLen: 48, prefixLen: 38, numPrompts: 2 });
    assert.equal(r.options.prefix_lines, 4);
    const body = String(r.lines[0].messages[0].content).slice(SONNET_BASE_PROMPT.length);
    assert.ok(body.startsWith("a b c d\ne f g h\ni j k l"), JSON.stringify(body));
    assert.ok(!body.startsWith("a b c d\ne f g h\ni j k l\n"), "the last line has no newline of its own");
  });

  test("a file of blank lines only is refused, naming the file", async () => {
    await assert.rejects(read("\n\n  \n", { inputLen: 40, prefixLen: 0 }), /has no non-blank lines/);
  });
});
