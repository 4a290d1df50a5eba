/**
 * `ik prompts build --dataset NAME --dataset-path FILE` end to end through dist/ik (issue 19 §2):
 * for every format a fixture made at test time by scripts/make_dataset_fixtures.ts becomes a valid
 * prompt set (`ik prompts validate` exit 0) with the expected rows, filters, lengths and manifest;
 * malformed files exit 65 with one stderr line naming file:line. Lengths by words (the mock's
 * pseudo-tokens), so every count is known, and once by the server's /tokenize (`ik mock`, loopback).
 * Budget: ~10 s, both runtimes.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { AZURE_HEADER, BURSTGPT_HEADER, makeDatasetFixtures, SHAREGPT_CASES } from "../../scripts/make_dataset_fixtures.ts";
import { pseudoTokens } from "../../lib/prompts/synth.ts";
import { runIk, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

type Obj = Record<string, any>;
let dir: string;
let fx: Record<string, string>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-datasets-"));
  fx = makeDatasetFixtures(join(dir, "src"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

let outN = 0;
/** Builds, validates, and returns the lines and manifest. */
async function build(dataset: string, file: string, ...args: string[]): Promise<{ lines: Obj[]; manifest: Obj; stdout: string; stderr: string; sha256: string }> {
  const out = join(dir, `out-${outN++}.jsonl`);
  const r = await runIk(["prompts", "build", "--dataset", dataset, "--dataset-path", fx[file], "--out", out, ...args]);
  assert.equal(r.code, 0, r.stderr);
  const v = await runIk(["prompts", "validate", out]);
  assert.equal(v.code, 0, `prompts validate: ${v.stderr}`);
  const text = await readFile(out, "utf8");
  const manifest = JSON.parse(await readFile(out.replace(/\.jsonl$/, ".manifest.json"), "utf8"));
  const sha256 = createHash("sha256").update(text).digest("hex");
  assert.equal(manifest.sha256, sha256, "the manifest names the set's sha256");
  assert.ok(v.stdout.includes(sha256), v.stdout);
  return { lines: text.split("\n").filter((l) => l).map((l) => JSON.parse(l)), manifest, stdout: r.stdout, stderr: r.stderr, sha256 };
}

const fileSha = async (name: string) => createHash("sha256").update(await readFile(fx[name])).digest("hex");
const drops = (m: Obj) => (m.dataset.filters as Obj[]).map((f) => f.dropped);

describe("ik prompts build (dist/ik)", { skip: BINARY_ONLY_SUITE }, () => {
  test("sharegpt: first human turn, the answer's tokens as max_tokens, vLLM's filters counted, the source identified", async () => {
    const { lines, manifest, stderr } = await build("sharegpt", "sharegpt.json", "--num-prompts", "0");
    const byId = new Map(SHAREGPT_CASES.map((c, i) => [`sharegpt-${i}`, c as Obj]));
    assert.deepEqual(lines.map((l) => l.id).sort(), ["sharegpt-0", "sharegpt-10", "sharegpt-11", "sharegpt-12", "sharegpt-13", "sharegpt-6", "sharegpt-9"]);
    for (const l of lines) {
      const turns = byId.get(l.id)!.conversations as Obj[];
      const h = turns.findIndex((t) => t.from === "human");
      assert.equal(l.messages[0].content, turns[h].value, `${l.id}: the first human turn`);
      assert.equal(l.max_tokens, pseudoTokens(turns[h + 1].value), `${l.id}: the answer's length`);
      assert.equal(l.bucket, "sharegpt");
      assert.equal(l.input_tokens, pseudoTokens(turns[h].value));
    }
    // fewer than 2 turns, no answer, under 4, prompt over 1024, pair over 2048
    assert.deepEqual(drops(manifest), [2, 1, 2, 1, 1]);
    assert.equal(manifest.dataset.rows, SHAREGPT_CASES.length);
    assert.deepEqual(manifest.dataset.source, { file: "sharegpt.json", sha256: await fileSha("sharegpt.json"), bytes: (await readFile(fx["sharegpt.json"])).length, gzip: false });
    assert.equal(manifest.dataset.length_method, "words");
    assert.match(manifest.limitations[0], /approximate/);
    assert.match(stderr, /lengths are approximate/);
    const gz = await build("sharegpt", "sharegpt.json.gz", "--num-prompts", "0");
    assert.equal(gz.manifest.sha256, manifest.sha256, ".gz gives the same set");
    assert.equal(gz.manifest.dataset.source.sha256, await fileSha("sharegpt.json.gz"));
    assert.equal(gz.manifest.dataset.source.gzip, true);
  });

  test("sharegpt: the seeded sample is deterministic; --output-len replaces the answer and skips its minimum", async () => {
    const a = await build("sharegpt", "sharegpt.json", "--num-prompts", "3", "--seed", "1");
    const b = await build("sharegpt", "sharegpt.json", "--limit", "3", "--seed", "1");
    const c = await build("sharegpt", "sharegpt.json", "--num-prompts", "3", "--seed", "2");
    assert.equal(a.lines.length, 3);
    assert.equal(a.sha256, b.sha256, "same seed, same bytes");
    assert.notEqual(a.sha256, c.sha256, "another seed, another sample");
    const o = await build("sharegpt", "sharegpt.json", "--num-prompts", "0", "--output-len", "50");
    assert.ok(o.lines.every((l) => l.max_tokens === 50));
    // short-answer (3-word answer) and long-pair (1000 + 50 <= 2048) now pass.
    assert.equal(o.lines.length, 9);
    assert.ok(o.lines.some((l) => l.id === "sharegpt-3") && o.lines.some((l) => l.id === "sharegpt-5"));
    assert.deepEqual(drops(o.manifest), [2, 1, 1, 1, 0]);
  });

  test("sonnet: vLLM's instruction and shared prefix lines, drawn lines within --input-len", async () => {
    const { lines, manifest } = await build("sonnet", "sonnet.txt", "--input-len", "60", "--prefix-len", "20", "--output-len", "16", "--num-prompts", "4");
    assert.equal(lines.length, 4);
    const first = (await readFile(fx["sonnet.txt"], "utf8")).split("\n")[0];
    const prefix = `Pick as many lines as you can from these poem lines:\n${first}\n`;
    for (const l of lines) {
      const text = l.messages[0].content as string;
      assert.ok(text.startsWith(prefix), text.slice(0, 80));
      assert.equal(l.cache_salt_at, prefix.length);
      assert.equal(l.input_tokens, pseudoTokens(text));
      assert.ok(l.input_tokens <= 60 && l.input_tokens >= 50, String(l.input_tokens));
      assert.equal(l.max_tokens, 16);
    }
    assert.equal(manifest.dataset.options.prefix_lines, 1);
  });

  test("jsonl: vLLM's prompt/output_tokens and OpenAI messages; custom is its vLLM name", async () => {
    const { lines, manifest } = await build("custom", "custom.jsonl", "--num-prompts", "0");
    assert.equal(manifest.dataset.name, "jsonl");
    const bySource = Object.fromEntries(lines.map((l) => [l.source_line, l]));
    assert.deepEqual(Object.keys(bySource).map(Number).sort(), [1, 2, 4, 5]);
    assert.deepEqual([1, 2, 4, 5].map((k) => bySource[k].max_tokens), [12, 256, 7, 256]);
    assert.equal(bySource[4].messages[0].role, "system");
    assert.equal(bySource[1].input_tokens, 9);
    assert.deepEqual(drops(manifest), [1]);
    const o = await build("jsonl", "custom.jsonl", "--num-prompts", "2", "--output-len", "9");
    assert.equal(o.lines.length, 2);
    assert.ok(o.lines.every((l) => l.max_tokens === 9));
  });

  test("burstgpt: GPT-4 rows that did not fail, prompts of exactly the trace's lengths, in arrival order", async () => {
    const { lines, manifest } = await build("burstgpt", "burstgpt.csv", "--num-prompts", "0");
    assert.deepEqual(lines.map((l) => l.arrival_s), [12, 20, 31, 40, 44]);
    assert.deepEqual(lines.map((l) => l.max_tokens), [64, 33, 5, 120, 21]);
    assert.deepEqual(lines.map((l) => l.input_tokens), [31, 120, 9, 300, 57]);
    for (const l of lines) assert.equal(pseudoTokens(l.messages[0].content), l.input_tokens);
    assert.deepEqual(drops(manifest), [2, 1, 0, 0]);
    assert.deepEqual(manifest.dataset.lengths, { n: 5, exact: 5, max_abs_off_target: 0, floor_tokens: 0, raised_to_floor: 0 });
  });

  test("--bucket-by input:E1,E2: input-length bins instead of one bucket; an uncounted prompt has its own", async () => {
    const { lines, manifest } = await build("burstgpt", "burstgpt.csv", "--num-prompts", "0", "--bucket-by", "input:32,128");
    assert.deepEqual(lines.map((l) => [l.input_tokens, l.bucket]), [[31, "burstgpt-le32"], [120, "burstgpt-le128"], [9, "burstgpt-le32"], [300, "burstgpt-gt128"], [57, "burstgpt-le128"]]);
    assert.deepEqual(manifest.buckets, ["burstgpt-le32", "burstgpt-le128", "burstgpt-gt128"]);
    assert.deepEqual(manifest.dataset.bucket_by, { by: "input", edges: [32, 128] });
    const j = await build("jsonl", "custom.jsonl", "--num-prompts", "0", "--bucket-by", "input:8");
    const bySource = Object.fromEntries(j.lines.map((l) => [l.source_line, l.bucket]));
    assert.deepEqual(bySource, { 1: "jsonl-gt8", 2: "jsonl-le8", 4: "jsonl-uncounted", 5: "jsonl-gt8" });
    const r = await runIk(["prompts", "build", "--dataset", "azure", "--dataset-path", fx["azure.csv"], "--bucket-by", "input:512,128", "--out", join(dir, "bb.jsonl")]);
    assert.equal(r.code, 64, r.stderr);
    assert.match(r.stderr, /--bucket-by.*ascend/);
  });

  test("azure: TIMESTAMP as seconds from the first row, ContextTokens and GeneratedTokens", async () => {
    const { lines, manifest } = await build("azure", "azure.csv", "--num-prompts", "0");
    assert.deepEqual(lines.map((l) => l.arrival_s), [0, 4.314579, 5.31941, 8.81941]);
    assert.deepEqual(lines.map((l) => l.input_tokens), [374, 396, 45, 1200]);
    assert.deepEqual(lines.map((l) => l.max_tokens), [44, 109, 17, 230]);
    assert.equal(lines[0].trace_timestamp, "2023-11-16 18:15:46.6805900");
    assert.deepEqual(drops(manifest), [1, 0, 0]);
  });

  test("--tokenize-via: trace prompts of exactly the trace's lengths as the server counts them, template included", async () => {
    let mock: MockProc | null = null;
    try {
      mock = await startMock([]);
      const { lines, manifest } = await build("burstgpt", "burstgpt.csv", "--num-prompts", "0", "--tokenize-via", mock.base);
      assert.equal(manifest.length_method, "server_tokenize:vllm");
      assert.equal(manifest.tokenize.engine, "vllm");
      assert.deepEqual(lines.map((l) => l.input_tokens), [31, 120, 9, 300, 57]);
      assert.ok(manifest.dataset.lengths.floor_tokens > 0, "the chat template counts");
      // The template's tokens are inside input_tokens: the message text alone has fewer words.
      for (const l of lines) assert.equal(pseudoTokens(l.messages[0].content), l.input_tokens - manifest.dataset.lengths.floor_tokens);
      assert.ok(!manifest.limitations.some((x: string) => /approximate/.test(x)));
      const sg = await build("sharegpt", "sharegpt.json", "--num-prompts", "0", "--tokenize-via", mock.base);
      assert.equal(sg.lines.length, 7);
      assert.ok(sg.manifest.tokenize.text_calls >= 14, `the bare counts of the pairs examined are counted too (${sg.manifest.tokenize.text_calls})`);
      assert.ok(sg.lines.every((l) => l.length_method === "server_tokenize:vllm" && l.input_tokens > l.prompt_text_tokens));
    } finally {
      await mock?.stop();
    }
  });

  test("malformed files: exit 65, one stderr line naming file:line", async () => {
    const cases: [string, string, RegExp][] = [
      ["sharegpt", "sharegpt_bad.json", /^ik: sharegpt_bad\.json:3: not JSON/],
      ["sharegpt", "sharegpt_badturn.json", /^ik: sharegpt_badturn\.json:3: each turn/],
      ["sharegpt", "sharegpt_truncated.json", /^ik: sharegpt_truncated\.json:\d+: the file ends inside/],
      ["jsonl", "custom_bad.jsonl", /^ik: custom_bad\.jsonl:3: not JSON/],
      ["jsonl", "custom_noprompt.jsonl", /^ik: custom_noprompt\.jsonl:2: needs 'prompt'/],
      ["burstgpt", "burstgpt_nocol.csv", /^ik: burstgpt_nocol\.csv:1: missing column 'Response tokens'/],
      ["burstgpt", "burstgpt_badnum.csv", /^ik: burstgpt_badnum\.csv:3: 'Request tokens' is not a number \('ten'\)/],
      ["azure", "azure_bad.csv", /^ik: azure_bad\.csv:4: 'ContextTokens' is not a number \('many'\)/],
      ["azure", "burstgpt.csv", /^ik: burstgpt\.csv:1: missing columns 'TIMESTAMP', 'ContextTokens', 'GeneratedTokens'/],
      ["sharegpt", "sharegpt_none.json", /^ik: sharegpt_none\.json: no row passed the sharegpt filters \(5 rows read\)/],
      ["mooncake", "mooncake_bad.jsonl", /^ik: mooncake_bad\.jsonl:2: 1 hash_ids for input_length 600: a Mooncake row has ceil\(input_length \/ 512\) = 2/],
      ["mooncake", "mooncake_badjson.jsonl", /^ik: mooncake_badjson\.jsonl:2: not valid JSON/],
    ];
    for (const [ds, file, re] of cases) {
      const r = await runIk(["prompts", "build", "--dataset", ds, "--dataset-path", fx[file], "--out", join(dir, "bad.jsonl")]);
      assert.equal(r.code, 65, `${file}: ${r.stderr}`);
      assert.equal(r.stderr.trimEnd().split("\n").length, 1, `${file}: one line: ${r.stderr}`);
      assert.match(r.stderr, re, file);
    }
  });

  test("usage errors: flags for another format, a missing file (64)", async () => {
    const out = join(dir, "u.jsonl");
    for (const args of [
      ["--dataset", "burstgpt", "--dataset-path", fx["burstgpt.csv"], "--output-len", "5"],
      ["--dataset", "sharegpt", "--dataset-path", fx["sharegpt.json"], "--input-len", "5"],
      ["--dataset", "sharegpt", "--dataset-path", join(dir, "nope.json")],
      ["--dataset", "parquet", "--dataset-path", fx["sharegpt.json"]],
      ["--dataset", "sonnet", "--dataset-path", fx["sonnet.txt"], "--num-prompts", "0"],
      ["--dataset", "sonnet", "--dataset-path", fx["sonnet.txt"], "--input-len", "5"],
    ]) {
      const r = await runIk(["prompts", "build", ...args, "--out", out]);
      assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
    }
  });
});

test("the fixtures follow the formats' public definitions", async () => {
  // BurstGPT README: Timestamp, Model, Request tokens, Response tokens, Total tokens, Log Type.
  const burst = (await readFile(fx["burstgpt.csv"], "utf8")).trim().split("\n");
  assert.deepEqual(burst[0].split(","), ["Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"]);
  assert.equal(burst[0], BURSTGPT_HEADER);
  for (const row of burst.slice(1)) {
    const [ts, model, req, res, total, log] = row.split(",");
    assert.ok(/^\d+$/.test(ts) && /^(ChatGPT|GPT-4)$/.test(model) && /^(Conversation log|API log)$/.test(log), row);
    assert.equal(Number(req) + Number(res), Number(total), `${row}: Total tokens = Request + Response`);
  }
  // Azure LLM inference trace 2023: TIMESTAMP (7-digit fractional seconds), ContextTokens, GeneratedTokens.
  const az = (await readFile(fx["azure.csv"], "utf8")).trim().split("\n");
  assert.equal(az[0], AZURE_HEADER);
  assert.deepEqual(az[0].split(","), ["TIMESTAMP", "ContextTokens", "GeneratedTokens"]);
  for (const row of az.slice(1)) assert.match(row, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{7},\d+,\d+$/);
  // ShareGPT_V3: an array of {id, conversations: [{from: human|gpt, value}]}.
  const sg = JSON.parse(await readFile(fx["sharegpt.json"], "utf8")) as Obj[];
  for (const e of sg) {
    assert.ok(Object.keys(e).every((k) => k === "id" || k === "conversations"), JSON.stringify(e).slice(0, 80));
    for (const t of e.conversations ?? []) assert.ok(["human", "gpt"].includes(t.from) && typeof t.value === "string" && Object.keys(t).length === 2);
  }
  // vLLM's custom dataset: one JSON object per line with "prompt" (and ik's optional output_tokens), or OpenAI messages.
  for (const l of (await readFile(fx["custom.jsonl"], "utf8")).split("\n").filter((x) => x)) {
    const o = JSON.parse(l);
    assert.ok(typeof o.prompt === "string" || Array.isArray(o.messages), l);
  }
});
