/**
 * Writes tiny dataset files in each format `ik prompts build --dataset` reads, made up here (never
 * copied from a dataset), with known rows for every filter, plus malformed files whose bad line is
 * known. tests/datasets/ calls it at test time; run it by hand to look at them:
 *
 *     bun scripts/make_dataset_fixtures.ts /tmp/ik-datasets
 *
 * The formats follow their public definitions: ShareGPT_V3 (a JSON array of
 * `{"id", "conversations": [{"from": "human"|"gpt", "value"}]}`, two-space indented), sonnet (plain
 * lines), vLLM's custom JSONL (`prompt`, optional `output_tokens`) and OpenAI `messages`, BurstGPT
 * (`Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`), the Azure LLM inference
 * trace (`TIMESTAMP,ContextTokens,GeneratedTokens`), the Mooncake trace (JSONL `timestamp`,
 * `input_length`, `output_length`, `hash_ids`).
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** The BurstGPT CSV header (HPMLL/BurstGPT README). */
export const BURSTGPT_HEADER = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type";
/** The Azure LLM inference trace 2023 CSV header (Azure/AzurePublicDataset). */
export const AZURE_HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens";

const WORDS = "amber brook cedar dawn ember fern glade harbor iris juniper kestrel lark meadow nettle orchard pebble quartz rowan sparrow thistle umber vale willow yarrow".split(" ");

/** `n` made-up words, the same for the same `k`. */
function words(n: number, k: number): string {
  return Array.from({ length: n }, (_, i) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(" ");
}

const turn = (from: string, n: number, k: number) => ({ from, value: words(n, k) });

/** ShareGPT entries, with what the words counter and vLLM's filters make of each. */
export const SHAREGPT_CASES = [
  { id: "ok-0", conversations: [turn("human", 6, 0), turn("gpt", 10, 1)] }, // kept, max_tokens 10
  { id: "one-turn", conversations: [turn("human", 6, 2)] }, // fewer than 2 turns
  { id: "short-prompt", conversations: [turn("human", 2, 3), turn("gpt", 10, 4)] }, // prompt under 4
  { id: "short-answer", conversations: [turn("human", 6, 5), turn("gpt", 3, 6)] }, // answer under 4
  { id: "long-prompt", conversations: [turn("human", 1100, 7), turn("gpt", 10, 8)] }, // prompt over 1024
  { id: "long-pair", conversations: [turn("human", 1000, 9), turn("gpt", 1100, 10)] }, // total over 2048
  { id: "gpt-first", conversations: [turn("gpt", 5, 11), turn("human", 8, 12), turn("gpt", 20, 13)] }, // kept: prompt is the human turn
  { id: "no-conv" }, // fewer than 2 turns
  { id: "human-human", conversations: [turn("human", 6, 14), turn("human", 6, 15)] }, // no answer
  ...Array.from({ length: 5 }, (_, i) => ({ id: `ok-${i + 1}`, conversations: [turn("human", 5 + i, 20 + i), turn("gpt", 12 + i, 30 + i), turn("human", 4, 40), turn("gpt", 4, 41)] })),
];

/** Sonnet lines: 6 to 8 made-up words each. */
export const SONNET_LINES = Array.from({ length: 30 }, (_, i) => words(6 + (i % 3), 50 + i));

/**
 * Mooncake rows: a 6-request replay over 1.4 s in which rows 1, 3 and 5 share blocks 10 and 11 (a
 * shared 1,024-token prefix), row 4 shares block 20 with row 2, and row 2 fails (output 0, dropped
 * as vLLM drops failed trace rows).
 */
export const MOONCAKE_ROWS = [
  { timestamp: 1000, input_length: 1100, output_length: 6, hash_ids: [10, 11, 12] },
  { timestamp: 1250, input_length: 700, output_length: 5, hash_ids: [20, 21] },
  { timestamp: 1300, input_length: 300, output_length: 0, hash_ids: [30] },
  { timestamp: 1600, input_length: 1300, output_length: 4, hash_ids: [10, 11, 13] },
  { timestamp: 1900, input_length: 600, output_length: 7, hash_ids: [20, 22] },
  { timestamp: 2400, input_length: 1050, output_length: 5, hash_ids: [10, 11, 14] },
];

/** Writes every fixture into `dir`; returns their paths by name. */
export function makeDatasetFixtures(dir: string): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {};
  const put = (name: string, data: string | Uint8Array) => {
    files[name] = join(dir, name);
    writeFileSync(files[name], data);
  };
  const sharegpt = JSON.stringify(SHAREGPT_CASES, null, 2);
  put("sharegpt.json", sharegpt);
  put("sharegpt.json.gz", gzipSync(sharegpt));
  // One element per line, so the bad one is line 3 under every runtime's JSON parser.
  put("sharegpt_bad.json", `[\n${JSON.stringify(SHAREGPT_CASES[0])},\n{"id": "bad", "conversations": [{"from": "human", "value": nope}]}\n]\n`);
  put("sharegpt_truncated.json", sharegpt.slice(0, Math.floor(sharegpt.length / 2)));
  put("sharegpt_badturn.json", `[\n${JSON.stringify(SHAREGPT_CASES[0])},\n{"id": "t", "conversations": [{"from": "human", "value": 5}, {"from": "gpt", "value": "x"}]}\n]\n`);
  put("sharegpt_none.json", JSON.stringify(SHAREGPT_CASES.slice(1, 6), null, 2)); // every entry filtered out
  put("sonnet.txt", SONNET_LINES.join("\n") + "\n");
  put("custom.jsonl", [
    JSON.stringify({ prompt: words(9, 60), output_tokens: 12 }),
    JSON.stringify({ prompt: words(7, 61) }),
    "",
    JSON.stringify({ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: words(5, 62) }], output_tokens: 7 }),
    JSON.stringify({ messages: [{ role: "user", content: words(11, 63) }] }),
  ].join("\n") + "\n");
  put("custom_bad.jsonl", `${JSON.stringify({ prompt: "a b c d" })}\n${JSON.stringify({ prompt: "e f g h" })}\n{"prompt": "unterminated\n`);
  put("custom_noprompt.jsonl", `${JSON.stringify({ prompt: "a b c d" })}\n${JSON.stringify({ text: "no prompt field" })}\n`);
  put("burstgpt.csv", [
    BURSTGPT_HEADER,
    "5,ChatGPT,472,18,490,Conversation log",
    "12,GPT-4,31,64,95,Conversation log",
    "17,GPT-4,250,0,250,Conversation log",
    "20,GPT-4,120,33,153,API log",
    "26,ChatGPT,88,40,128,API log",
    "31,GPT-4,9,5,14,Conversation log",
    "40,GPT-4,300,120,420,Conversation log",
    "44,GPT-4,57,21,78,API log",
  ].join("\n") + "\n");
  put("burstgpt_nocol.csv", "Timestamp,Model,Request tokens,Total tokens,Log Type\n5,GPT-4,10,20,API log\n");
  put("burstgpt_badnum.csv", `${BURSTGPT_HEADER}\n5,GPT-4,10,20,30,API log\n9,GPT-4,ten,20,30,API log\n`);
  put("azure.csv", [
    AZURE_HEADER,
    "2023-11-16 18:15:46.6805900,374,44",
    "2023-11-16 18:15:50.9951690,396,109",
    "2023-11-16 18:15:51.2406480,879,0",
    "2023-11-16 18:15:52.0000000,45,17",
    "2023-11-16 18:15:55.5000000,1200,230",
  ].join("\n") + "\n");
  // Mooncake (kvcache-ai/Mooncake FAST25 traces): timestamp ms, input_length, output_length, hash_ids of 512-token blocks.
  put("mooncake.jsonl", MOONCAKE_ROWS.map((r) => JSON.stringify(r)).join("\n") + "\n");
  put("mooncake_bad.jsonl", `${JSON.stringify(MOONCAKE_ROWS[0])}\n${JSON.stringify({ timestamp: 900, input_length: 600, output_length: 8, hash_ids: [1] })}\n`);
  put("mooncake_badjson.jsonl", `${JSON.stringify(MOONCAKE_ROWS[0])}\n{"timestamp": 5, "input_length": 10,\n`);
  put("azure_bad.csv", `${AZURE_HEADER}\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:47.0000000,12,3\n2023-11-16 18:15:48.0000000,many,3\n`);
  return files;
}

if (import.meta.main) {
  const dir = (globalThis as { process?: { argv: string[] } }).process?.argv[2] ?? "dataset-fixtures";
  const files = makeDatasetFixtures(dir);
  for (const f of Object.values(files)) console.log(f);
}
