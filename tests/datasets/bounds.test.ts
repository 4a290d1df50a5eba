/**
 * What a dataset row may say (in process, < 2 s, both runtimes): token lengths are safe integers up
 * to 1,000,000 (a trace row of 1e11 input tokens is refused at its line, not built), times are
 * finite and 0 or more, dates exist, CSV numbers are decimal; an Azure file out of time order is
 * sorted with arrival_s from its earliest row (never negative) and says so; a prompt set's
 * max_tokens has the same bound; Mooncake blocks are 512 tokens of the prompt under a tokenizer
 * that adds a BOS; a file that is not UTF-8 is refused naming the line, also past the first chunk.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { readCustomJsonl } from "../../lib/datasets/custom_jsonl.ts";
import { readMooncake } from "../../lib/datasets/mooncake.ts";
import { azureTimestampS, type DatasetCounter, type DatasetName, wordCounter } from "../../lib/datasets/mod.ts";
import { readTrace } from "../../lib/datasets/traces.ts";
import { firstInvalidUtf8 } from "../../lib/datasets/_utf8.ts";
import { parsePromptSetText } from "../../lib/prompts/mod.ts";
import { AZURE_HEADER, BURSTGPT_HEADER } from "../../scripts/make_dataset_fixtures.ts";

let dir = "";
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-dataset-bounds-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function file(text: string | Uint8Array, ext = "csv"): Promise<string> {
  const path = join(dir, `f${n++}.${ext}`);
  await writeFile(path, text);
  return path;
}

const read = (name: DatasetName, path: string, counter: DatasetCounter = wordCounter()) => {
  const o = { name, path, counter, numPrompts: 0, seed: 1 };
  if (name === "burstgpt" || name === "azure") return readTrace({ ...o, name });
  return name === "mooncake" ? readMooncake(o) : readCustomJsonl(o);
};

/** Reading `text` as `name` is refused with 65 at `line`, the message matching `re`. */
async function refused(name: DatasetName, text: string, line: number, re: RegExp, ext = "csv") {
  const path = await file(text, ext);
  const t0 = Date.now();
  await assert.rejects(read(name, path), (e: unknown) => {
    assert.ok(e instanceof IkError, String(e));
    assert.equal(e.code, 65, e.message);
    assert.match(`${e.where}: ${e.message}`, new RegExp(`^f\\d+\\.${ext}:${line}: ${re.source}`));
    return true;
  });
  assert.ok(Date.now() - t0 < 5000, "refused at once, nothing built");
}

test("BurstGPT: lengths over 1,000,000 or not safe integers, negative or absurd times, hex numbers: 65 at the line", async () => {
  const row = (ts: string, inTok: string, outTok: string) => `${BURSTGPT_HEADER}\n1,GPT-4,10,5,15,Conversation log\n${ts},GPT-4,${inTok},${outTok},0,Conversation log\n`;
  await refused("burstgpt", row("5", "100000000000", "18"), 3, /'Request tokens' must be a whole number of tokens, 0\.\.1000000 \(got 100000000000\)/);
  await refused("burstgpt", row("5", "1000001", "18"), 3, /'Request tokens'/);
  await refused("burstgpt", row("5", "100", "1e21"), 3, /'Response tokens' must be a whole number of tokens/);
  await refused("burstgpt", row("5", "100", "2.5"), 3, /'Response tokens'/);
  await refused("burstgpt", row("-5", "100", "18"), 3, /'Timestamp' must be a time in seconds, 0\.\./);
  await refused("burstgpt", row("1e300", "100", "18"), 3, /'Timestamp' must be a time in seconds/);
  await refused("burstgpt", row("0x10", "100", "18"), 3, /'Timestamp' is not a number \('0x10'\)/);
  await refused("burstgpt", row("5", "0b11", "18"), 3, /'Request tokens' is not a number/);
  await refused("burstgpt", row("Infinity", "100", "18"), 3, /'Timestamp' is not a number/);
  // The bound itself is a length, and decimal forms are numbers.
  const ok = await read("burstgpt", await file(`${BURSTGPT_HEADER}\n+2.5,GPT-4,1e1,1000000,0,Conversation log\n`));
  assert.equal(ok.lines[0].maxTokens, 1_000_000);
  assert.equal(ok.lines[0].extra.arrival_s, 2.5);
});

test("Azure: impossible dates and offsets are not dates; lengths bounded; 0x10 is not a number", async () => {
  for (const bad of ["2023-02-30 18:16:46.0", "2023-11-16 25:15:46.0", "2023-13-01 00:00:00", "2023-11-16 18:60:00", "2023-11-16 18:15:60", "0050-01-01 00:00:00", "2024-05-10 00:00:00+24:00", "2024-05-10 00:00:00+01:60"]) {
    assert.ok(Number.isNaN(azureTimestampS(bad)), bad);
  }
  assert.equal(azureTimestampS("2024-02-29 00:00:00"), Date.UTC(2024, 1, 29) / 1000, "a leap day is a date");
  assert.equal(azureTimestampS("2023-12-31 23:59:59Z"), Date.UTC(2023, 11, 31, 23, 59, 59) / 1000);
  await refused("azure", `${AZURE_HEADER}\n2023-11-16 18:15:46.0,10,4\n2023-02-30 18:16:46.0,10,4\n`, 3, /'TIMESTAMP' is not a date and time/);
  await refused("azure", `${AZURE_HEADER}\n2023-11-16 18:15:46.0,0x10,4\n`, 2, /'ContextTokens' is not a number \('0x10'\)/);
  await refused("azure", `${AZURE_HEADER}\n2023-11-16 18:15:46.0,2000000,4\n`, 2, /'ContextTokens' must be a whole number of tokens, 0\.\.1000000/);
  await refused("azure", `${AZURE_HEADER}\n2023-11-16 18:15:46.0,10,9007199254740993\n`, 2, /'GeneratedTokens' must be a whole number of tokens/);
});

test("Azure rows out of time order: arrival_s from the earliest row, written in time order, and a note says so", async () => {
  const text = `${AZURE_HEADER}\n2023-11-16 18:16:46.0,10,4\n2023-11-16 18:15:46.0,12,4\n2023-11-16 18:17:46.5,14,4\n`;
  const r = await read("azure", await file(text));
  assert.deepEqual(r.lines.map((l) => l.extra.arrival_s), [0, 60, 120.5]);
  assert.deepEqual(r.lines.map((l) => l.extra.source_line), [3, 2, 4]);
  assert.equal(r.options.file_in_time_order, false);
  assert.ok(r.notes.some((x) => /not in time order \(line 3 /.test(x)), r.notes.join(" | "));
  const sorted = await read("azure", await file(`${AZURE_HEADER}\n2023-11-16 18:15:46.0,12,4\n2023-11-16 18:16:46.0,10,4\n`));
  assert.deepEqual(sorted.lines.map((l) => l.extra.arrival_s), [0, 60]);
  assert.equal(sorted.options.file_in_time_order, true);
  assert.ok(!sorted.notes.some((x) => /time order/.test(x)));
});

test("JSONL output_tokens and a prompt set's max_tokens: positive safe integers up to 1,000,000", async () => {
  await refused("jsonl", '{"prompt":"ok","output_tokens":4}\n{"prompt":"Huge output","output_tokens":1e21}\n', 2, /'output_tokens' must be a positive integer, at most 1000000 \(got 1e\+21\)/, "jsonl");
  await refused("jsonl", '{"prompt":"Huge output","output_tokens":1000001}\n', 1, /'output_tokens'/, "jsonl");
  const ok = await read("jsonl", await file('{"prompt":"x","output_tokens":1000000}\n', "jsonl"));
  assert.equal(ok.lines[0].maxTokens, 1_000_000);
  const line = (mt: unknown) => JSON.stringify({ id: "a", bucket: "b", messages: [{ role: "user", content: "x" }], max_tokens: mt });
  for (const mt of [1e21, 1_000_001, 2 ** 53 + 2, 0, 1.5]) {
    assert.throws(() => parsePromptSetText(line(mt) + "\n", "s.jsonl"), (e: unknown) => e instanceof IkError && e.code === 65 && /'max_tokens' must be a positive integer, at most 1000000/.test(e.message), String(mt));
  }
  assert.equal(parsePromptSetText(line(1_000_000) + "\n", "s.jsonl")[0].maxTokens, 1_000_000);
});

test("Mooncake: lengths, times and hash ids bounded (65 at the line)", async () => {
  const row = (o: Record<string, unknown>) => JSON.stringify({ timestamp: 0, input_length: 10, output_length: 4, hash_ids: [1], ...o });
  const two = (o: Record<string, unknown>) => `${row({})}\n${row(o)}\n`;
  await refused("mooncake", two({ output_length: 1e300 }), 2, /'output_length' must be a whole number of tokens, 0\.\.1000000/, "jsonl");
  await refused("mooncake", two({ output_length: 1e21 }), 2, /'output_length'/, "jsonl");
  await refused("mooncake", two({ input_length: 100_000_000_000, hash_ids: [1] }), 2, /'input_length' must be a whole number of tokens, 1\.\.1000000/, "jsonl");
  await refused("mooncake", two({ timestamp: 1e300 }), 2, /'timestamp' must be a time in milliseconds/, "jsonl");
  await refused("mooncake", two({ timestamp: -1 }), 2, /'timestamp'/, "jsonl");
  await refused("mooncake", two({ hash_ids: [1e300] }), 2, /'hash_ids' must be a list of whole numbers/, "jsonl");
});

/** Words as tokens, plus a BOS on every text (as a Llama tokenizer counts) and 3 template tokens on a request. */
function bosCounter(): DatasetCounter {
  const words = (t: string) => (t.match(/\S+/g) ?? []).length;
  return { method: "fake_bos", text: (t) => Promise.resolve(1 + words(t)), request: (t) => Promise.resolve(4 + words(t)) };
}

test("Mooncake under a BOS-adding counter: rows sharing a hash id share exactly 512 leading tokens; lengths exact", async () => {
  const rows = [
    { timestamp: 0, input_length: 700, output_length: 4, hash_ids: [7, 100] },
    { timestamp: 10, input_length: 650, output_length: 4, hash_ids: [7, 101] },
    { timestamp: 20, input_length: 1200, output_length: 4, hash_ids: [7, 8, 102] },
  ];
  const r = await read("mooncake", await file(rows.map((x) => JSON.stringify(x)).join("\n") + "\n", "jsonl"), bosCounter());
  const words = r.lines.map((l) => String(l.messages[0].content).split(" "));
  const block = words[0].slice(0, 512).join(" ");
  for (const [i, w] of words.entries()) {
    assert.equal(w.length + 4, rows[i].input_length, `row ${i}: the request counts input_length`);
    assert.equal(w.slice(0, 512).join(" "), block, `row ${i}: block 7 is its first 512 tokens`);
  }
  // Rows 0 and 1 share block 7 and nothing after it (their last blocks differ).
  let k = 0;
  while (words[0][k] === words[1][k]) k++;
  assert.ok(k >= 512 && k < 512 + 4, `rows 0 and 1 share ${k} leading words`);
});

test("a dataset that is not UTF-8 is refused naming the line of the bad byte, past the first 256 KiB chunk too", async () => {
  const bad = (before: string, after: string) => {
    const enc = new TextEncoder();
    const a = enc.encode(before), b = enc.encode(after);
    const out = new Uint8Array(a.length + 1 + b.length);
    out.set(a);
    out[a.length] = 0xff;
    out.set(b, a.length + 1);
    return out;
  };
  const small = await file(bad('{"prompt":"ok one"}\n{"prompt":"ok two"}\n{"prompt":"bad ', ' byte"}\n'), "jsonl");
  await assert.rejects(read("jsonl", small), (e: unknown) => e instanceof IkError && e.code === 65 && /^f\d+\.jsonl:3$/.test(String(e.where)) && /not UTF-8/.test(e.message));
  // 20,000 lines of 21 bytes (420 KB): the bad byte in line 20,001 is in the second 256 KiB chunk.
  const many = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ prompt: `p${String(i).padStart(6, "0")}` })).join("\n") + "\n";
  const big = await file(bad(many + '{"prompt":"x', '"}\n' + many), "jsonl");
  await assert.rejects(read("jsonl", big), (e: unknown) => e instanceof IkError && e.code === 65 && /^f\d+\.jsonl:20001$/.test(String(e.where)));
  // A three-byte character split across chunks is UTF-8; a lone continuation or an overlong form is not.
  const enc = new TextEncoder().encode("a€b");
  assert.equal(firstInvalidUtf8(enc), enc.length);
  assert.equal(firstInvalidUtf8(enc.subarray(0, 2)), 2, "cut at the end: may go on");
  assert.equal(firstInvalidUtf8(enc.subarray(2)), enc.length - 2, "continuation bytes at the start end the chunk before's");
  assert.equal(firstInvalidUtf8(Uint8Array.of(0x41, 0xc0, 0x80)), 1, "overlong");
  assert.equal(firstInvalidUtf8(Uint8Array.of(0x41, 0xed, 0xa0, 0x80)), 1, "a surrogate");
  assert.equal(firstInvalidUtf8(Uint8Array.of(0x41, 0x80, 0x41)), 1, "a lone continuation");
});
