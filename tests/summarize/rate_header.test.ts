/**
 * The headline table's first column: seed 003 heads it "Concurrency", and so does ik for vLLM's own
 * files; a table whose every cell is an `ik export`ed open-loop rate level (runs.tsv's conc holds
 * the rate) heads it "Rate (req/s)", and the JSON says `conc_is_rate`. In-memory, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderUnit } from "../../lib/summarize/mod.ts";
import { summarizeMem, tsv } from "./_mem.ts";

const HEAD = ["tag", "dataset", "conc", "serial_lo", "serial_hi", "warmups", "catfile", "rc", "container"];
const base = { num_prompts: 2, completed: 2, failed: 0, duration: 1, output_throughput: 8, request_throughput: 2, total_token_throughput: 10 };
/** An exported rate level at `rate` req/s, as ik export writes it. */
const exported = (rate: number | "inf", over: Record<string, unknown> = {}) => JSON.stringify({ ...base, ik_evidence_id: "serve_benchmark-x", request_rate: rate, max_concurrency: null, ...over });

async function table(cells: [tag: string, dataset: string, conc: number, result: string][]): Promise<{ header: string; rate: boolean[] }> {
  const files: Record<string, string> = { "runs.tsv": tsv([HEAD, ...cells.map(([t, d, c]) => [t, d, c, 0, 0, 0, "-", 0, "-"])]) };
  for (const [t, , , r] of cells) files[`results/${t}.json`] = r;
  const s = await summarizeMem(files);
  const text = renderUnit(s).split("\n");
  return { header: text[text.findIndex((l) => l.startsWith("== ")) + 1], rate: s.runs.map((r) => r.conc_is_rate) };
}

describe("the headline table's first column", () => {
  test("every cell an exported rate level: Rate (req/s)", async () => {
    const t = await table([["l-r4", "l-rate", 4, exported(4)], ["l-r0.5", "l-rate", 0.5, exported(0.5)]]);
    assert.match(t.header, /^\| Rate \(req\/s\) \| Requests \| Output tok\/s \|/);
    assert.deepEqual(t.rate, [true, true]);
  });

  test("a partial merge's level (its target scaled to the share sent, below the grid's rate): Rate (req/s)", async () => {
    const t = await table([["l-r4", "l-rate", 4, exported(3.6)], ["l-r8", "l-rate", 8, exported(8)]]);
    assert.match(t.header, /^\| Rate \(req\/s\) \|/);
    assert.deepEqual(t.rate, [true, true]);
  });

  test("vLLM's own files, even at a request rate under a -rate dataset: Concurrency, as the seed", async () => {
    const t = await table([["v-r4", "v-rate", 4, JSON.stringify({ ...base, request_rate: 4, max_concurrency: null })]]);
    assert.match(t.header, /^\| Concurrency \| Requests \|/);
    assert.deepEqual(t.rate, [false]);
  });

  for (const [name, cell] of [
    ["a closed loop (max_concurrency)", ["c2", "l-closed-loop", 2, exported("inf", { max_concurrency: 2 })]],
    ["an open-loop cap", ["r4", "l-rate", 3, exported(4, { max_concurrency: 3 })]],
    ["request_rate inf (conc: every request)", ["rinf", "l-rate", 2, exported("inf")]],
    ["a concurrency grid offered as a rate", ["c4", "l-concurrency", 4, exported(4)]],
    ["conc edited below the rate", ["r4", "l-rate", 3, exported(4)]],
  ] as [string, [string, string, number, string]][]) {
    test(`${name}: Concurrency`, async () => {
      const t = await table([cell]);
      assert.match(t.header, /^\| Concurrency \|/);
      assert.deepEqual(t.rate, [false]);
    });
  }

  test("a table mixing a rate level with another cell: Concurrency (the seed's header)", async () => {
    const t = await table([["l-r4", "l-rate", 4, exported(4)], ["l-rinf", "l-rate", 2, exported("inf")]]);
    assert.match(t.header, /^\| Concurrency \|/);
    assert.deepEqual(t.rate, [true, false]);
  });
});
