/**
 * Mooncake blocks: a row whose last block is a full 512 tokens gives that hash id's one shared text,
 * so a later row that extends it (the same ids and one more) starts with the whole of it, as
 * AIPerf replays a trace (each hash id's tokens cached once). Only a partial last block is fitted.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readMooncake } from "../../lib/datasets/mooncake.ts";
import type { DatasetCounter } from "../../lib/datasets/mod.ts";

const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
/** Words, and a request counts 3 template tokens more (as a server's /tokenize with a chat template). */
const templated: DatasetCounter = { method: "fake", request: (t) => Promise.resolve(words(t) + 3), text: (t) => Promise.resolve(words(t)) };

test("readMooncake: a full last block is its id's shared text, so a later row extending it shares all of it", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-mooncake-full-"));
  try {
    const path = join(dir, "full.jsonl");
    const rows = [
      { timestamp: 0, input_length: 1024, output_length: 4, hash_ids: [7, 8] },
      { timestamp: 500, input_length: 1300, output_length: 4, hash_ids: [7, 8, 9] },
      { timestamp: 900, input_length: 512, output_length: 4, hash_ids: [8] },
    ];
    await writeFile(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = await readMooncake({ name: "mooncake", path, counter: templated, numPrompts: 0, seed: 5 });
    const [a, b, c] = r.lines.map((l) => String(l.messages[0].content));
    assert.equal(words(a), 1024, "two whole blocks of 512 words");
    assert.ok(b.startsWith(a + " "), "row 2 starts with all of row 1 (blocks 7 and 8), its last block included");
    assert.equal(words(b) + 3, 1300, "the partial last block is fitted to the request's input_length");
    assert.ok(a.endsWith(" " + c), "block 8 alone is the same text as row 1's last block");
    assert.equal(r.options.unique_blocks, 2, "blocks 7 and 8 made once each (9 is partial: fitted)");
    // The full-block rows count the template over input_length: said, with the true counts kept.
    assert.equal(r.lines[0].extra.input_tokens, 1027);
    assert.equal(r.lines[0].extra.target_input_tokens, 1024);
    assert.ok(r.notes.some((n) => /^2 of the prompts that missed end on a full 512-token block, .*off by up to 3 token/.test(n)), r.notes.join(" | "));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
