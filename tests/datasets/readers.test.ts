/**
 * The pieces under the dataset readers (in process, < 1 s, both runtimes): the streaming JSON
 * array reader gives the same elements however the text is cut, and names the line of a bad one;
 * the seeded pool picks the same items whatever its size (and ShareGPT's refill of a pool too small
 * for the filters gives the same set); CSV fields; Azure timestamps; the Mooncake reader's shared
 * blocks (rows sharing leading hash ids share that text word for word) and exact lengths.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { JsonArrayReader } from "../../lib/datasets/_json_array.ts";
import { SeededPool } from "../../lib/datasets/_pool.ts";
import { splitCsvLine } from "../../lib/datasets/_csv.ts";
import { azureTimestampS, wordCounter } from "../../lib/datasets/mod.ts";
import { readShareGpt } from "../../lib/datasets/sharegpt.ts";
import { IkError } from "../../lib/cli/errors.ts";
import { readMooncake } from "../../lib/datasets/mooncake.ts";
import { MOONCAKE_ROWS, SHAREGPT_CASES } from "../../scripts/make_dataset_fixtures.ts";

function readAll(text: string, cut: (t: string) => string[]): { values: unknown[]; lines: number[] } {
  const values: unknown[] = [], lines: number[] = [];
  const r = new JsonArrayReader("f.json", (v, line) => {
    values.push(v);
    lines.push(line);
  });
  for (const piece of cut(text)) r.push(piece);
  r.end();
  return { values, lines };
}

test("JsonArrayReader: the same elements and start lines for any cut of the text", () => {
  const text = JSON.stringify([...SHAREGPT_CASES, "a string with ] and , and \\\" inside", 42, [1, [2]], null], null, 2);
  const whole = readAll(text, (t) => [t]);
  assert.deepEqual(whole.values, JSON.parse(text));
  const starts = text.split("\n").map((l, i) => (/^ {2}[^\s}\]]/.test(l) ? i + 1 : 0)).filter((n) => n > 0);
  assert.deepEqual(whole.lines, starts, "each element's first line");
  for (const size of [1, 2, 7, 64, 1000]) {
    const r = readAll(text, (t) => Array.from({ length: Math.ceil(t.length / size) }, (_, i) => t.slice(i * size, (i + 1) * size)));
    assert.deepEqual(r.values, whole.values, `pieces of ${size}`);
    assert.deepEqual(r.lines, whole.lines, `pieces of ${size}`);
  }
  assert.deepEqual(readAll("[]", (t) => [t]).values, []);
});

test("JsonArrayReader: malformed arrays name their line", () => {
  const bad = (text: string, re: RegExp) => {
    assert.throws(() => readAll(text, (t) => [t]), (e: unknown) => e instanceof IkError && e.code === 65 && re.test(`${e.where}: ${e.message}`));
  };
  bad('{"a": 1}', /^f\.json:1: not a JSON array/);
  bad('[\n{"a": 1},\n{"a": nope}\n]', /^f\.json:3: not JSON/);
  bad('[\n{"a": 1}\n{"b": 2}\n]', /^f\.json:3: expected ','/);
  bad('[\n{"a": 1},\n]', /^f\.json:3: a ','/);
  bad('[\n{"a": "x', /^f\.json:2: the file ends inside a string/);
  bad('[\n{"a": 1}\n', /ends inside the array/);
  bad('[1]\n[2]', /^f\.json:2: text after/);
  bad("", /empty file/);
});

test("SeededPool: the smallest keys in key order, the same for any pool size that holds them", () => {
  const all = new SeededPool<number>(0, 7);
  for (let i = 0; i < 500; i++) all.offer(i, i);
  const order = all.sorted().map((e) => e.index);
  assert.equal(order.length, 500);
  assert.notDeepEqual(order.slice(0, 20), [...Array(20).keys()], "shuffled");
  for (const size of [10, 37, 200]) {
    const p = new SeededPool<number>(size, 7);
    for (let i = 0; i < 500; i++) p.offer(i, i);
    assert.deepEqual(p.sorted().map((e) => e.index), order.slice(0, size), `size ${size}`);
    assert.equal(p.evicted, 500 - size);
  }
  const other = new SeededPool<number>(10, 8);
  for (let i = 0; i < 500; i++) other.offer(i, i);
  assert.notDeepEqual(other.sorted().map((e) => e.index), order.slice(0, 10), "another seed");
});

test("CSV fields and Azure timestamps", () => {
  assert.deepEqual(splitCsvLine('5,"GPT-4",10, 20 ,"a ""q"", b"', "x:2"), ["5", "GPT-4", "10", "20", 'a "q", b']);
  assert.deepEqual(splitCsvLine("a,,b,", "x:2"), ["a", "", "b", ""]);
  assert.throws(() => splitCsvLine('a,"b', "x:2"), /unterminated/);
  assert.ok(Math.abs(azureTimestampS("2023-11-16 18:15:50.9951690") - azureTimestampS("2023-11-16 18:15:46.6805900") - 4.314579) < 1e-6);
  assert.ok(Number.isNaN(azureTimestampS("yesterday")));
  // The 2024 files: an offset, 6 fraction digits or none (AzurePublicDataset's 2024 notebook).
  assert.ok(Math.abs(azureTimestampS("2024-05-10 00:00:00.009930+00:00") - azureTimestampS("2024-05-10 00:00:00+00:00") - 0.00993) < 1e-6);
  assert.equal(azureTimestampS("2024-05-10 00:00:00+00:00"), Date.UTC(2024, 4, 10) / 1000);
  assert.equal(azureTimestampS("2024-05-10 02:00:00+02:00"), Date.UTC(2024, 4, 10) / 1000, "an offset is applied");
  assert.equal(azureTimestampS("2024-05-10T00:00:00Z"), Date.UTC(2024, 4, 10) / 1000);
  assert.ok(Number.isNaN(azureTimestampS("2024-05-10 00:00:00+0")));
});

test("readShareGpt: a pool too small for the filters is refilled by a second read; the set is the same as from every row", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-sharegpt-pool-"));
  try {
    // 600 entries, 4 in 5 with a 2-word prompt (dropped): 100 wanted, the first pool of 356 holds about 71 that pass.
    const entries = Array.from({ length: 600 }, (_, i) => ({
      id: `e${i}`,
      conversations: [{ from: "human", value: i % 5 === 0 ? `p${i} a b c d e` : "two words" }, { from: "gpt", value: `answer ${i} w x y z` }],
    }));
    const path = join(dir, "pool.json");
    await writeFile(path, JSON.stringify(entries, null, 2));
    const all = await readShareGpt({ name: "sharegpt", path, counter: wordCounter(), numPrompts: 0, seed: 3 });
    assert.equal(all.lines.length, 120);
    const some = await readShareGpt({ name: "sharegpt", path, counter: wordCounter(), numPrompts: 100, seed: 3 });
    assert.equal(some.lines.length, 100);
    assert.deepEqual(some.lines.map((l) => l.id), all.lines.slice(0, 100).map((l) => l.id), "the first 100 of the seeded order");
    assert.ok(some.examined > 356, `more than the first pool was examined (${some.examined})`);
    assert.equal(some.filters[2].dropped, some.examined - 100);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("readMooncake: rows sharing leading hash ids share that text word for word, lengths exact, arrival order, failed rows dropped", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-mooncake-"));
  try {
    const path = join(dir, "m.jsonl");
    await writeFile(path, MOONCAKE_ROWS.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = await readMooncake({ name: "mooncake", path, counter: wordCounter(), numPrompts: 0, seed: 3 });
    const kept = MOONCAKE_ROWS.filter((x) => x.output_length > 0);
    assert.equal(r.lines.length, kept.length);
    assert.deepEqual(r.filters.find((f) => f.filter === "output_length 0")?.dropped, 1);
    const words = r.lines.map((l) => String(l.messages[0].content).split(" "));
    for (const [i, l] of r.lines.entries()) {
      assert.equal(words[i].length, kept[i].input_length, `${l.id}: words = the trace's input length`);
      assert.equal(l.extra.input_tokens, kept[i].input_length);
      assert.equal(l.maxTokens, kept[i].output_length);
      assert.equal(l.extra.arrival_s, (kept[i].timestamp - kept[0].timestamp) / 1000);
    }
    const shared = (a: number, b: number) => {
      let k = 0;
      while (k < words[a].length && words[a][k] === words[b][k]) k++;
      return k;
    };
    // Rows 0, 2 and 4 of the kept ones start with blocks 10, 11 (1,024 tokens); rows 1 and 3 with block 20.
    assert.ok(shared(0, 2) >= 1024 && shared(0, 2) < 1024 + 8, `0/2 share ${shared(0, 2)} words`);
    assert.ok(shared(0, 4) >= 1024 && shared(2, 4) >= 1024);
    assert.ok(shared(1, 3) >= 512 && shared(1, 3) < 512 + 8, `1/3 share ${shared(1, 3)}`);
    assert.ok(shared(0, 1) < 8, "unrelated blocks differ");
    assert.equal(r.options.unique_blocks, 3, "the full (non-last) blocks 10, 11 and 20, each made once");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("readShareGpt firstTwoTurns: vLLM's pair is conversations[0] and [1] whatever their roles", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-sharegpt-first-two-"));
  try {
    const path = join(dir, "sg.json");
    await writeFile(path, JSON.stringify(SHAREGPT_CASES));
    const ours = await readShareGpt({ name: "sharegpt", path, counter: wordCounter(), numPrompts: 0, seed: 3 });
    const vllm = await readShareGpt({ name: "sharegpt", path, counter: wordCounter(), numPrompts: 0, seed: 3, firstTwoTurns: true });
    const byId = (r: typeof ours) => new Map(r.lines.map((l) => [l.extra.source_id, l]));
    const [a, b] = [byId(ours), byId(vllm)];
    const gptFirst = SHAREGPT_CASES.find((c) => c.id === "gpt-first")!.conversations!;
    assert.equal(a.get("gpt-first")!.messages[0].content, gptFirst[1].value, "ours: the human turn");
    assert.equal(b.get("gpt-first")!.messages[0].content, gptFirst[0].value, "vLLM: the first turn");
    assert.equal(b.get("gpt-first")!.maxTokens, 8, "the second turn's length");
    assert.ok(!a.has("human-human") && b.has("human-human"), "vLLM pairs two human turns");
    assert.equal(vllm.filters.find((f) => /no human turn/.test(f.filter))?.dropped ?? 0, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
