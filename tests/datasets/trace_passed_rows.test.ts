/**
 * A trace set's source counts, as a replay's record reads them (`data.trace`: source_rows,
 * passed_rows, chosen_rows, sampled): a blank line is not a row, so it is not taken off the rows
 * that passed, for every trace format (Mooncake JSONL, BurstGPT and Azure CSV); with --num-prompts
 * 0 the chosen rows are every row that passed; a manifest written before `passed` was recorded reads
 * the same. In process, word counts, both runtimes.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { buildDataset, wordCounter } from "../../lib/datasets/mod.ts";
import { traceSourceOf } from "../../lib/bench/trace_record.ts";

let dir = "";
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-trace-passed-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mc = (ts: number, out: number, id: number) => JSON.stringify({ timestamp: ts, input_length: 100, output_length: out, hash_ids: [id] });
/** Each format: 3 rows that pass, one a filter drops, and a blank line between them. */
const FILES = {
  mooncake: { file: "mc.jsonl", text: [mc(0, 5, 1), "", mc(500, 5, 2), mc(700, 0, 4), mc(1000, 5, 3)].join("\n") + "\n" },
  burstgpt: {
    file: "burst.csv",
    text: "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,GPT-4,20,4,24,Conversation log\n\n6,GPT-4,30,5,35,Conversation log\n7,ChatGPT,30,5,35,Conversation log\n8,GPT-4,25,6,31,Conversation log\n",
  },
  azure: {
    file: "azure.csv",
    text: "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,20,4\n\n2023-11-16 18:15:47.0000000,30,5\n2023-11-16 18:15:47.5000000,30,0\n2023-11-16 18:15:48.0000000,25,6\n",
  },
} as const;

async function sourceOf(name: keyof typeof FILES, numPrompts: number) {
  const path = join(dir, FILES[name].file);
  await writeFile(path, FILES[name].text);
  const b = await buildDataset({ name, path, counter: wordCounter(), numPrompts, seed: 0 });
  return { dataset: b.dataset, source: traceSourceOf({ dataset: b.dataset }) };
}

test("a blank line in a trace: 4 rows, 3 passed, a sample of 2 is sampled (arrivals thinned), for every trace format", async () => {
  for (const name of Object.keys(FILES) as (keyof typeof FILES)[]) {
    const { dataset, source } = await sourceOf(name, 2);
    assert.equal(dataset.passed, 3, name);
    assert.ok((dataset.filters as { filter: string; dropped: number }[]).some((f) => f.filter === "blank lines" && f.dropped === 1), `${name}: the blank line is still counted`);
    assert.deepEqual(source, { sourceRows: 4, passedRows: 3, chosenRows: 2, sampled: true }, name);
  }
});

test("--num-prompts 0 with a blank line: every row that passed is chosen, never more than passed, and not sampled", async () => {
  for (const name of Object.keys(FILES) as (keyof typeof FILES)[]) {
    const { source } = await sourceOf(name, 0);
    assert.deepEqual(source, { sourceRows: 4, passedRows: 3, chosenRows: 3, sampled: false }, name);
  }
});

test("a manifest written before `passed` was recorded: its blank-lines entry is not taken off the rows", () => {
  const old = (chosen: number) => ({
    dataset: { name: "mooncake", rows: 4, chosen, num_prompts: chosen, filters: [{ filter: "output_length 0", dropped: 1 }, { filter: "blank lines", dropped: 1 }], options: { order: "arrival" } },
  });
  assert.deepEqual(traceSourceOf(old(2)), { sourceRows: 4, passedRows: 3, chosenRows: 2, sampled: true });
  assert.deepEqual(traceSourceOf(old(3)), { sourceRows: 4, passedRows: 3, chosenRows: 3, sampled: false });
});
