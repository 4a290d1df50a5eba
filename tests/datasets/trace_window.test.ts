/**
 * A replay of N rows of a trace is a window of it: `bench serve --dataset mooncake|azure|burstgpt
 * --limit-per-bucket N` keeps the trace's first N rows in time order (as AIPerf's fixed schedule
 * and `--prompts SET --limit-per-bucket N` do), never a seeded subset that thins its arrivals; the
 * manifest says so, and the dataset's notes (stderr) are the record's args too. In process, with a
 * word-counting tokenizer: about 100 ms.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readMooncake } from "../../lib/datasets/mooncake.ts";
import { readTrace } from "../../lib/datasets/traces.ts";
import { wordCounter } from "../../lib/datasets/mod.ts";
import { datasetPromptSet } from "../../lib/commands/bench_serve_dataset.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import type { LoadedTokenizer } from "../../lib/tokenizer/load_tokenizer.ts";
import { TIME_WINDOW_SELECTION } from "../../lib/schedule/trace_schedule.ts";

/** 40 rows, one a second, written out of time order (the last two lines swapped). */
function mooncakeRows(): string {
  const rows = Array.from({ length: 40 }, (_, i) => ({ timestamp: i * 1000, input_length: 20, output_length: 4, hash_ids: [i] }));
  [rows[38], rows[39]] = [rows[39], rows[38]];
  return rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

test("readMooncake/readTrace timeWindow: the first N rows in time order, whatever the file's order; without it a seeded sample", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-trace-window-"));
  try {
    const path = join(dir, "long.jsonl");
    // Row 0 last in the file: still the first in time.
    const lines = mooncakeRows().trim().split("\n");
    await writeFile(path, [...lines.slice(1), lines[0]].join("\n") + "\n");
    const win = await readMooncake({ name: "mooncake", path, counter: wordCounter(), numPrompts: 6, seed: 0, timeWindow: true });
    assert.deepEqual(win.lines.map((l) => l.extra.arrival_s), [0, 1, 2, 3, 4, 5]);
    assert.equal(win.options.selection, TIME_WINDOW_SELECTION);
    const seeded = await readMooncake({ name: "mooncake", path, counter: wordCounter(), numPrompts: 6, seed: 0 });
    assert.notDeepEqual(seeded.lines.map((l) => l.extra.arrival_s), [0, 1, 2, 3, 4, 5], "the seeded sample is another set of rows");
    assert.equal(seeded.options.selection, undefined);
    const all = await readMooncake({ name: "mooncake", path, counter: wordCounter(), numPrompts: 0, seed: 0, timeWindow: true });
    assert.equal(all.lines.length, 40);
    assert.equal(all.options.selection, undefined, "every row: no window to name");
    const csv = join(dir, "az.csv");
    const at = (s: number) => `2023-11-16 18:15:${String(s).padStart(2, "0")}.0000000`;
    await writeFile(csv, "TIMESTAMP,ContextTokens,GeneratedTokens\n" + [9, 3, 7, 1, 5, 2, 8].map((s) => `${at(s)},10,${s === 2 ? 0 : 3}`).join("\n") + "\n");
    const az = await readTrace({ name: "azure", path: csv, counter: wordCounter(), numPrompts: 3, seed: 0, timeWindow: true });
    assert.deepEqual(az.lines.map((l) => l.extra.trace_timestamp), [at(1), at(3), at(5)], "the earliest three that pass (the row at :02 has no output)");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("datasetPromptSet: --limit-per-bucket of a trace is its first rows in time order; its notes go into the record's args", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-trace-window-serve-"));
  try {
    const path = join(dir, "long.jsonl");
    await writeFile(path, mooncakeRows());
    const said: string[] = [];
    const ctx = { runtime: { cwd: () => dir }, err: (t: string) => said.push(t), out: () => {}, json: true, signal: new AbortController().signal } as unknown as CommandContext;
    const tok = { count: (t: string) => t.split(/\s+/).filter(Boolean).length } as unknown as LoadedTokenizer;
    const server = { baseUrl: "http://127.0.0.1:9", api: "chat" as const, model: "m" };
    const flags = { dataset: "mooncake", datasetPath: "long.jsonl", limitPerBucket: 6, buckets: [], seed: 0, mode: "trace" };
    const { set, args } = await datasetPromptSet(ctx, flags, tok, server);
    assert.deepEqual(set.prompts.map((p) => p.extra.arrival_s), [0, 1, 2, 3, 4, 5], "0-5 s, not seeded rows (0, 1, 11, 23, 26, 29 s)");
    const ds = args.dataset as Record<string, unknown>;
    assert.equal(ds.chosen, 6);
    assert.match(String(ds.sample), /first num_prompts rows in time order/);
    assert.equal(((set.manifest?.dataset as Record<string, unknown>).options as Record<string, unknown>).selection, TIME_WINDOW_SELECTION);
    // The file is not in time order: said on stderr, and kept in the record's args.
    const notes = ds.notes as string[];
    assert.ok(notes.some((n) => /not in time order/.test(n)), notes.join(" | "));
    assert.ok(said.some((l) => /not in time order/.test(l)));
    // A non-trace dataset keeps the seeded sample.
    const sg = join(dir, "sg.jsonl");
    await writeFile(sg, Array.from({ length: 20 }, (_, i) => JSON.stringify({ prompt: `p ${i} ${"w ".repeat(5)}`, output_tokens: 3 })).join("\n") + "\n");
    const custom = await datasetPromptSet(ctx, { ...flags, dataset: "jsonl", datasetPath: "sg.jsonl", mode: "load" }, tok, server);
    assert.match(String((custom.args.dataset as Record<string, unknown>).sample), /^seeded/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
